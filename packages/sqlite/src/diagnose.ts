/**
 * What `diagnose()` finds of a SQLite store: its schema, the journal and sync settings, the modes
 * of the database's files, and, where the store's values are encrypted, whether the file may
 * still hold values from before (clean-file.ts).
 */
import { existsSync, statSync } from 'node:fs';
import { type Diagnosis, durabilityDiagnosis, schemaDiagnosis } from '@ckpt/core/adapter';
import type Database from 'better-sqlite3';
import { cleanFileDiagnosis } from './clean-file.js';
import type { Synchronous } from './connection.js';
import { SCHEMA_VERSION, tables } from './schema.js';

/**
 * The checks of namespace `namespace` in `db`, opened at `synchronous`; `encrypted`: a store
 * whose codecs encrypt was made on it.
 */
export async function diagnose(
  db: Database.Database,
  namespace: string,
  synchronous: Synchronous,
  encrypted: boolean,
): Promise<Diagnosis[]> {
  const version = db
    .prepare(`SELECT value FROM ${tables(namespace).meta} WHERE key = 'checkpoints_schema_version'`)
    .pluck()
    .get();
  const journal = String(db.pragma('journal_mode', { simple: true }));
  const durable = synchronous === 'full' || synchronous === 'extra';
  const found: Diagnosis[] = [
    schemaDiagnosis({
      where: `namespace '${namespace}'`,
      version,
      pkg: '@ckpt/sqlite',
      latest: SCHEMA_VERSION,
    }),
    durabilityDiagnosis({
      settings: `journal_mode = ${journal}, synchronous = ${synchronous}`,
      ok: durable && journal === 'wal',
      consequence: durable
        ? 'a call that resolved survives a crash of the process or the machine'
        : synchronous === 'normal'
          ? 'the last calls before a power loss or crash of the machine may be lost'
          : 'a crash of the machine may lose calls or corrupt the file',
      fix: "open the store with synchronous 'full' (the default): sqlite({ path, synchronous: 'full' }) or 'sqlite:./agent.db?synchronous=full'",
    }),
  ];
  if (db.memory) return found;
  for (const file of [db.name, `${db.name}-wal`, `${db.name}-shm`]) {
    if (!existsSync(file)) continue;
    const mode = statSync(file).mode & 0o777;
    const shown = mode.toString(8).padStart(4, '0');
    found.push({
      check: 'file mode',
      status: (mode & 0o077) === 0 ? 'ok' : 'warn',
      detail: `${file} is ${shown}${(mode & 0o077) === 0 ? '' : ': others can read or write the sessions in it'}`,
      fix: `chmod 600 '${file}'`,
    });
  }
  if (encrypted) found.push(cleanFileDiagnosis(db, namespace));
  return found;
}
