/**
 * A namespace's migration in a database file: the SQL family's runner, run synchronously (as
 * better-sqlite3 runs everything) under the file's write lock.
 */
import type { StoreLocation } from '@ckpt/core/adapter';
import { migrate } from '@ckpt/core/sql';
import type Database from 'better-sqlite3';
import { STEP_FUNCTIONS, tables } from './schema.js';

/**
 * Bring namespace `ns` to the latest of `steps` under `versionKey`, holding the write lock; or,
 * given `existing` (`create: false`), only check that it is there at the latest. The SQL
 * functions the steps call are defined on `db` first.
 */
export function migrateFile(
  db: Database.Database,
  ns: string,
  versionKey: string,
  steps: string[],
  existing: StoreLocation | undefined,
): void {
  const t = tables(ns);
  const ours = new Set(Object.values(t));
  for (const [name, fn] of Object.entries(STEP_FUNCTIONS)) {
    db.function(name, { deterministic: true }, fn);
  }
  migrate<string>({
    where: `namespace '${ns}'`,
    pkg: '@ckpt/sqlite',
    existing,
    meta: t.meta,
    steps,
    // IMMEDIATE takes the write lock first, so processes opening a new file at once migrate
    // one after the other and the later ones find the work done.
    locked: (work) => db.transaction(() => work()).immediate(),
    tables: () =>
      (
        db.prepare(`SELECT name FROM sqlite_schema WHERE type = 'table'`).all() as {
          name: string;
        }[]
      )
        .map((row) => row.name)
        .filter((name) => ours.has(name)),
    version: () =>
      (
        db.prepare(`SELECT value FROM ${t.meta} WHERE key = ?`).get(versionKey) as
          | { value: string }
          | undefined
      )?.value,
    // The native store and the KV store record their versions in one meta table.
    createMeta: () => {
      db.exec(
        `CREATE TABLE IF NOT EXISTS ${t.meta} (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
      );
    },
    run: (step) => {
      db.exec(step);
    },
    record: (version) => {
      db.prepare(
        `INSERT INTO ${t.meta} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
      ).run(versionKey, String(version));
    },
  });
}
