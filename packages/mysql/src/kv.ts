/** A `KvStore` on one MySQL / MariaDB table, with compareAndSet and list. */
import type { KvStore } from '@ckpt/core';
import { openAdapter } from '@ckpt/core/adapter';
import { KeyValueTable, keyValueStore, retrying } from '@ckpt/core/sql';
import { connect, type MysqlOptions } from './connection.js';
import { mysqlHints } from './error-hints.js';
import { migrate } from './migrate.js';
import { nothingLeft, statementRunner } from './runner.js';
import { kvStatements } from './statements.js';

/** A MySQL KvStore for `kvBackend(mysqlKv({ url }))`; one statement per call. */
export function mysqlKv(options: MysqlOptions): KvStore {
  const { pool, owned, address, namespace, existing, preparedStatements } = connect(options);
  const opening = openAdapter(
    () => migrate(pool, namespace, existing),
    async () => {
      if (owned) await pool.end();
    },
  );
  const run = retrying(
    { rolledBack: nothingLeft },
    statementRunner(pool, preparedStatements, opening.migrated),
  );
  return keyValueStore(new KeyValueTable(kvStatements(namespace), run), {
    close: opening.close,
    errorHint: mysqlHints(address),
  });
}
