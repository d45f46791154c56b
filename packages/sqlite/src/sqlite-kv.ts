/** A `KvStore` on one SQLite table, with compareAndSet and list. */
import { type KvStore, prefixUpperBound } from '@ckpt/core';
import { openDatabase, type SqliteOptions } from './open-database.js';
import { kvMigrations, tables } from './schema.js';

/** A SQLite KvStore for `kvBackend(sqliteKv({ path }))`; it owns its connection. */
export function sqliteKv(options: SqliteOptions): KvStore {
  const { db, namespace } = openDatabase(options, 'kv_schema_version', kvMigrations);
  const { kv } = tables(namespace);
  const sql = {
    get: db.prepare(`SELECT value FROM ${kv} WHERE key = ?`),
    set: db.prepare(
      `INSERT INTO ${kv} (key, value) VALUES (?, ?) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    ),
    delete: db.prepare(`DELETE FROM ${kv} WHERE key = ?`),
    insert: db.prepare(`INSERT INTO ${kv} (key, value) VALUES (?, ?) ON CONFLICT DO NOTHING`),
    replace: db.prepare(`UPDATE ${kv} SET value = ? WHERE key = ? AND value = ?`),
    list: db.prepare(`
      SELECT key FROM ${kv}
       WHERE key >= :prefix AND (:bound IS NULL OR key < :bound) AND (:after IS NULL OR key > :after)
       ORDER BY key LIMIT :limit`),
  };
  return {
    async get(key) {
      return (sql.get.get(key) as { value: string } | undefined)?.value;
    },
    async set(key, value) {
      sql.set.run(key, value);
    },
    async delete(key) {
      return sql.delete.run(key).changes > 0;
    },
    async compareAndSet(key, expected, value) {
      const result =
        expected === null ? sql.insert.run(key, value) : sql.replace.run(value, key, expected);
      return result.changes === 1;
    },
    async list(prefix, { after, limit } = {}) {
      const rows = sql.list.all({
        prefix,
        bound: prefixUpperBound(prefix),
        after: after ?? null,
        limit: limit ?? -1,
      }) as { key: string }[];
      return rows.map((r) => r.key);
    },
    async close() {
      if (db.open) db.close();
    },
  };
}
