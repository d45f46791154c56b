/** A `KvStore` on one MySQL / MariaDB table, with compareAndSet and list. */
import type { KvStore } from '@ckpt/core';
import { KeyValueTable, keyValueStore } from '@ckpt/core/sql';
import { connect, type MysqlOptions } from './connection.js';
import { mysqlHints } from './error-hints.js';
import { keyValueStatements } from './key-value-statements.js';
import { migrate } from './migrate.js';
import { tables } from './schema.js';
import { statementRunner } from './statement-runner.js';

/** A MySQL KvStore for `kvBackend(mysqlKv({ url }))`; one statement per call. */
export function mysqlKv(options: MysqlOptions): KvStore {
  const { pool, owned, address, namespace, existing, preparedStatements } = connect(options);
  const ready = migrate(pool, namespace, existing);
  ready.catch(() => {});
  const run = statementRunner(pool, preparedStatements, ready);
  const table = new KeyValueTable(keyValueStatements(tables(namespace).kv, ['k']), run);
  let closed = false;
  return keyValueStore(table, {
    async close() {
      if (closed) return;
      closed = true;
      await ready.catch(() => {});
      if (owned) await pool.end();
    },
    errorHint: mysqlHints(address),
  });
}
