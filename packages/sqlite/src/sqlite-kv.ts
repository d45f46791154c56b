/** A `KvStore` on one SQLite table, with compareAndSet and list. */
import type { KvStore } from '@ckpt/core';
import { KeyValueTable, keyValueSql, keyValueStore } from '@ckpt/core/sql';
import { openDatabase, type SqliteOptions } from './open-database.js';
import { kvMigrations, tables } from './schema.js';
import { execute, prepareAll } from './statements.js';

/** A SQLite KvStore for `kvBackend(sqliteKv({ path }))`; it owns its connection. */
export function sqliteKv(options: SqliteOptions): KvStore {
  const { db, namespace } = openDatabase(options, 'kv_schema_version', kvMigrations);
  const statements = prepareAll(
    db,
    keyValueSql({ table: tables(namespace).kv, keys: ['key'], onConflict: 'ON CONFLICT' }),
  );
  return keyValueStore(new KeyValueTable(statements, execute), {
    async close() {
      if (db.open) db.close();
    },
  });
}
