/** A `KvStore` on one PostgreSQL table, with compareAndSet and list. */
import { type KvStore, prefixUpperBound } from '@ckpt/core';
import {
  connect,
  migrate,
  type PostgresOptions,
  prepared,
  type Statement,
  statementRunner,
} from './connection.js';
import { schemaIdentifier } from './schema.js';

/** A PostgreSQL KvStore for `kvBackend(postgresKv({ url }))`; one statement per call. */
export function postgresKv(options: PostgresOptions): KvStore {
  const { pool, owned, namespace, preparedStatements } = connect(options);
  const ready = migrate(pool, namespace);
  const ns = schemaIdentifier(namespace);
  ready.catch(() => {});
  const run = statementRunner(pool, preparedStatements);
  const query = async (statement: Statement | string, values: unknown[]) => {
    await ready;
    return run(statement, values);
  };
  // Prepared once per connection, but for the page, whose plan depends on its bounds.
  const sql = {
    get: prepared(`SELECT value FROM ${ns}.kv WHERE key = $1`),
    set: prepared(
      `INSERT INTO ${ns}.kv (key, value) VALUES ($1, $2) ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
    ),
    delete: prepared(`DELETE FROM ${ns}.kv WHERE key = $1`),
    insert: prepared(`INSERT INTO ${ns}.kv (key, value) VALUES ($1, $2) ON CONFLICT DO NOTHING`),
    replace: prepared(`UPDATE ${ns}.kv SET value = $3 WHERE key = $1 AND value = $2`),
  };
  return {
    async get(key) {
      const result = await query(sql.get, [key]);
      return result.rows[0]?.value;
    },
    async set(key, value) {
      await query(sql.set, [key, value]);
    },
    async delete(key) {
      return ((await query(sql.delete, [key])).rowCount ?? 0) > 0;
    },
    async compareAndSet(key, expected, value) {
      const result =
        expected === null
          ? await query(sql.insert, [key, value])
          : await query(sql.replace, [key, expected, value]);
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
