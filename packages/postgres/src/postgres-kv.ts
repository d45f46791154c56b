/** A `KvStore` on one PostgreSQL table, with compareAndSet and list. */
import type { KvStore } from '@ckpt/core';
import { KeyValueTable, keyValueStore } from '@ckpt/core/sql';
import { connect, type PostgresOptions } from './connection.js';
import { postgresHints } from './error-hints.js';
import { keyValueStatements } from './key-value-statements.js';
import { migrate } from './migrate.js';
import { schemaIdentifier } from './schema.js';
import { statementRunner } from './statement-runner.js';

/** A PostgreSQL KvStore for `kvBackend(postgresKv({ url }))`; one statement per call. */
export function postgresKv(options: PostgresOptions): KvStore {
  const { pool, owned, address, defaultDatabase, namespace, existing, preparedStatements } =
    connect(options);
  const ready = migrate(pool, namespace, existing);
  ready.catch(() => {});
  const run = statementRunner(pool, preparedStatements, ready);
  const statements = keyValueStatements(`${schemaIdentifier(namespace)}.kv`, ['key']);
  return keyValueStore(new KeyValueTable(statements, run), {
    async close() {
      await ready.catch(() => {});
      if (owned && !pool.ended) await pool.end();
    },
    errorHint: postgresHints(address, defaultDatabase),
  });
}
