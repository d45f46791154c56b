/** A `KvStore` on one MySQL / MariaDB table, with compareAndSet and list. */
import { type KvStore, prefixUpperBound } from '@ckpt/core';
import { connect, type MysqlOptions, openStatements } from './connection.js';
import { tables } from './schema.js';

/** A MySQL KvStore for `kvBackend(mysqlKv({ url }))`; one statement per call. */
export function mysqlKv(options: MysqlOptions): KvStore {
  const { pool, owned, namespace, preparedStatements } = connect(options);
  const { kv } = tables(namespace);
  const { ready, run } = openStatements(pool, namespace, preparedStatements);
  let closed = false;
  const changed = async (sql: string, values: unknown[]) =>
    ((await run(sql, values)) as { affectedRows: number }).affectedRows;
  return {
    async get(key) {
      return ((await run(`SELECT value FROM ${kv} WHERE k = ?`, [key])) as { value: string }[])[0]
        ?.value;
    },
    async set(key, value) {
      await run(
        `INSERT INTO ${kv} (k, value) VALUES (?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value)`,
        [key, value],
      );
    },
    async delete(key) {
      return (await changed(`DELETE FROM ${kv} WHERE k = ?`, [key])) > 0;
    },
    async compareAndSet(key, expected, value) {
      const n =
        expected === null
          ? await changed(`INSERT IGNORE INTO ${kv} (k, value) VALUES (?, ?)`, [key, value])
          : await changed(`UPDATE ${kv} SET value = ? WHERE k = ? AND value = ?`, [
              value,
              key,
              expected,
            ]);
      return n === 1;
    },
    async list(prefix, { after, limit } = {}) {
      const bound = prefixUpperBound(prefix);
      const rows = (await run(
        `SELECT k FROM ${kv} WHERE k >= ? AND (? IS NULL OR k < ?) AND (? IS NULL OR k > ?) ORDER BY k LIMIT ?`,
        [prefix, bound, bound, after ?? null, after ?? null, limit ?? 1_000_000_000],
      )) as { k: Buffer }[];
      return rows.map((r) => r.k.toString('utf8'));
    },
    async close() {
      if (closed) return;
      closed = true;
      await ready.catch(() => {});
      if (owned) await pool.end();
    },
  };
}
