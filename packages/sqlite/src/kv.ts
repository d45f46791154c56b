/** A `KvStore` on one SQLite table, with compareAndSet and list. */
import type { KvStore } from '@ckpt/core';
import { openAdapter } from '@ckpt/core/adapter';
import { KeyValueTable, keyValueStore } from '@ckpt/core/sql';
import { openDatabase, type SqliteOptions } from './connection.js';
import { execute } from './runner.js';
import { kvMigrations, tables } from './schema.js';
import { keyValueStatements } from './statements.js';

/** A SQLite KvStore for `kvBackend(sqliteKv({ path }))`; it owns its connection. */
export function sqliteKv(options: SqliteOptions): KvStore {
  const { db, namespace } = openDatabase(options, 'kv_schema_version', kvMigrations);
  const opening = openAdapter(
    () => undefined,
    () => {
      if (db.open) db.close();
    },
  );
  const statements = keyValueStatements(db, tables(namespace).kv, ['key']);
  return keyValueStore(new KeyValueTable(statements, execute), { close: opening.close });
}
