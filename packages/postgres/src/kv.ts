/** A `KvStore` on one PostgreSQL table, with compareAndSet and list. */
import type { KvStore } from '@ckpt/core';
import { openAdapter } from '@ckpt/core/adapter';
import { KeyValueTable, keyValueStore, retrying } from '@ckpt/core/sql';
import { connect, type PostgresOptions } from './connection.js';
import { postgresHints } from './error-hints.js';
import { migrate } from './migrate.js';
import { rolledBackWhole, statementRunner } from './runner.js';
import { kvStatements } from './statements.js';

/** A PostgreSQL KvStore for `kvBackend(postgresKv({ url }))`; one statement per call. */
export function postgresKv(options: PostgresOptions): KvStore {
  const { pool, owned, address, defaultDatabase, namespace, existing, preparedStatements } =
    connect(options);
  const opening = openAdapter(
    () => migrate(pool, namespace, existing),
    async () => {
      if (owned && !pool.ended) await pool.end();
    },
  );
  const run = retrying(
    { rolledBack: rolledBackWhole },
    statementRunner(pool, preparedStatements, opening.migrated),
  );
  return keyValueStore(new KeyValueTable(kvStatements(namespace), run), {
    close: opening.close,
    errorHint: postgresHints(address, defaultDatabase),
  });
}
