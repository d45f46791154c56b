/**
 * The MySQL / MariaDB driver that core's SQL backend runs its statements on: mysql2's pool,
 * each statement prepared once per connection or sent as text (runner.ts), its connections held
 * for group commit.
 */
import type { SqlDriver } from '@ckpt/core/sql';
import type { Pool } from 'mysql2/promise';
import { type MysqlStatement, nothingLeft, refusedUnsent, statementRunner } from './runner.js';

/** `pool` (of `size` connections at most) as core's driver, once `packetBytes` resolved. */
export function mysqlDriver(
  pool: Pool,
  options: { prepare: boolean; packetBytes: Promise<number>; size: number },
): SqlDriver<MysqlStatement> {
  const run = statementRunner(pool, options.prepare, options.packetBytes);
  // The pool's queue of callers waiting for a connection: mysql2 keeps no public count.
  const waiting = (pool as { pool?: { _connectionQueue?: { length: number } } }).pool
    ?._connectionQueue;
  return {
    run: (statement, values) => run(statement, values),
    rolledBack: nothingLeft,
    connections: {
      size: options.size,
      full: () => (waiting?.length ?? 0) > 0,
      hold: async () => {
        const conn = await pool.getConnection();
        return {
          run: (statement, values) => run(statement, values, conn),
          release: (err) => (err === undefined ? conn.release() : conn.destroy()),
        };
      },
      // A batch too large for a packet was never sent: each of its checkpoints goes alone.
      refusedWhole: refusedUnsent,
    },
  };
}
