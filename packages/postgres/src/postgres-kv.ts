/** A `KvStore` on one PostgreSQL table, with compareAndSet and list. */
import { type KvStore, prefixUpperBound } from '@ckpt/core';
import { connect, migrate, type PostgresOptions, runStatement } from './connection.js';
import { schemaIdentifier } from './schema.js';

/** A PostgreSQL KvStore for `kvBackend(postgresKv({ url }))`; one statement per call. */
export function postgresKv(options: PostgresOptions): KvStore {
  const { pool, owned, namespace } = connect(options);
  const ready = migrate(pool, namespace);
  const ns = schemaIdentifier(namespace);
  ready.catch(() => {});
  const query = async (text: string, values: unknown[]) => {
    await ready;
    return runStatement(pool, text, values);
  };
  return {
    async get(key) {
      const result = await query(`SELECT value FROM ${ns}.kv WHERE key = $1`, [key]);
      return result.rows[0]?.value;
    },
    async set(key, value) {
      await query(
        `INSERT INTO ${ns}.kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [key, value],
      );
    },
    async delete(key) {
      return ((await query(`DELETE FROM ${ns}.kv WHERE key = $1`, [key])).rowCount ?? 0) > 0;
    },
    async compareAndSet(key, expected, value) {
      const result =
        expected === null
          ? await query(
              `INSERT INTO ${ns}.kv (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING`,
              [key, value],
            )
          : await query(`UPDATE ${ns}.kv SET value = $3 WHERE key = $1 AND value = $2`, [
              key,
              expected,
              value,
            ]);
      return result.rowCount === 1;
    },
    async list(prefix, { after, limit } = {}) {
      const result = await query(
        `SELECT key FROM ${ns}.kv
          WHERE key >= $1 AND ($2::text IS NULL OR key < $2) AND ($3::text IS NULL OR key > $3)
          ORDER BY key LIMIT $4`,
        [prefix, prefixUpperBound(prefix), after ?? null, limit ?? null],
      );
      return result.rows.map((r: { key: string }) => r.key);
    },
    async close() {
      await ready.catch(() => {});
      if (owned && !pool.ended) await pool.end();
    },
  };
}
