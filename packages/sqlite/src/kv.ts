/** A `KvStore` on one SQLite table, with compareAndSet, list, and a log of its writes. */
import type { KvStore } from '@ckpt/core';
import { logPosition, openAdapter } from '@ckpt/core/adapter';
import { KeyValueTable, keyValueStore } from '@ckpt/core/sql';
import type Database from 'better-sqlite3';
import { openDatabase, type SqliteOptions } from './connection.js';
import { execute } from './runner.js';
import { kvMigrations, tables } from './schema.js';
import { keyValueStatements } from './statements.js';

/** The writes the log keeps at least; a reader further behind is told 'expired'. */
const KEPT_WRITES = 10_000;
/** How often watchers read the log: one indexed read of the file a store, as sqlite() does. */
const CHANGES_POLL_MS = 25;
const POSITION = /^\d{20}$/;

/**
 * The KV store's migrations: its table (schema.ts), then the log of its writes. A step is
 * frozen once released: a change is a new step.
 *
 * The log has a row for each write of the table, written by triggers in the write's own
 * transaction, so that no write commits without its row, whichever process made it. SQLite
 * commits one writer at a time, so the ids come in the order the writes commit; a rowid above
 * the highest (never AUTOINCREMENT): the trim never removes the newest row, so ids only grow.
 * The log keeps the latest 10,000 writes or more (it lets go of 1,000 at a time), values
 * included, since a reader needs each value as it was written.
 */
function kvMigrationsWithLog(ns: string): string[] {
  const { kv } = tables(ns);
  const log = `${kv}_changes`;
  return [
    ...kvMigrations(ns),
    `
    CREATE TABLE ${log} (
      id    INTEGER PRIMARY KEY,
      key   TEXT NOT NULL,
      value TEXT
    );
    CREATE TRIGGER ${log}_at_insert AFTER INSERT ON ${kv} BEGIN
      INSERT INTO ${log} (key, value) VALUES (new.key, new.value);
    END;
    CREATE TRIGGER ${log}_at_update AFTER UPDATE ON ${kv} BEGIN
      INSERT INTO ${log} (key, value) VALUES (new.key, new.value);
    END;
    CREATE TRIGGER ${log}_at_delete AFTER DELETE ON ${kv} BEGIN
      INSERT INTO ${log} (key, value) VALUES (old.key, NULL);
    END;
    CREATE TRIGGER ${log}_trim AFTER INSERT ON ${log}
      WHEN new.id % 1000 = 0 AND new.id > ${KEPT_WRITES}
    BEGIN
      DELETE FROM ${log} WHERE id <= new.id - ${KEPT_WRITES};
    END;
    `,
  ];
}

interface WriteRow {
  id: number;
  key: string;
  value: string | null;
}

/** `KvStore.changes` on the log `kvMigrationsWithLog` made in `namespace`. */
function changesOf(db: Database.Database, namespace: string): Required<KvStore>['changes'] {
  const log = `${tables(namespace).kv}_changes`;
  const rowsAfter = db.prepare(
    `SELECT id, key, value FROM ${log} WHERE id > ? ORDER BY id LIMIT ?`,
  );
  // Both ends of a rowid table are read at its b-tree's edges.
  const bounds = db.prepare(`SELECT max(id) AS last, min(id) AS first FROM ${log}`);
  // The rows and the bounds from one snapshot: a trim between them would tell nothing.
  const read = db.transaction((after: number, limit: number) => ({
    rows: (limit > 0 ? rowsAfter.all(after, limit) : []) as WriteRow[],
    ...(bounds.get() as { last: number | null; first: number | null }),
  }));
  return async ({ after, limit }) => {
    if (after !== null && !POSITION.test(after)) return 'unknown';
    const from = after === null ? 0 : Number(after);
    const { rows, last, first } = read(from, after === null ? 0 : limit);
    if (after === null) return { changes: [], position: logPosition(last ?? 0) };
    if (from > (last ?? 0)) return 'unknown';
    if (first !== null && from < first - 1) return 'expired';
    const changes = rows.map((row) => ({
      key: row.key,
      value: row.value,
      position: logPosition(row.id),
    }));
    return { changes, position: changes.at(-1)?.position ?? after };
  };
}

/** A SQLite KvStore for `kvBackend(sqliteKv({ path }))`; it owns its connection. */
export function sqliteKv(options: SqliteOptions): KvStore {
  const { db, namespace } = openDatabase(options, 'kv_schema_version', kvMigrationsWithLog);
  const opening = openAdapter(
    () => undefined,
    () => {
      if (db.open) db.close();
    },
  );
  const statements = keyValueStatements(db, tables(namespace).kv, ['key']);
  return {
    ...keyValueStore(new KeyValueTable(statements, execute), { close: opening.close }),
    changes: changesOf(db, namespace),
    changesPollMs: CHANGES_POLL_MS,
  };
}
