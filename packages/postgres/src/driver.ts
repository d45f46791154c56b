/**
 * The PostgreSQL driver that core's SQL backend runs its statements on: pg's pool, each
 * statement prepared once per connection where it keeps them (runner.ts), its connections held
 * for group commit and for an import's transaction (lease.ts).
 */
import type { SqlDriver } from '@ckpt/core/sql';
import pg from 'pg';
import { lease, readCommitted } from './lease.js';
import { type PostgresSql, rolledBackWhole, statementRunner } from './runner.js';

/**
 * Whether the server refused a whole statement, which it then rolled back: an error of
 * severity ERROR, not a broken connection (whose outcome nobody knows).
 */
const refusedWhole = (err: unknown) => err instanceof pg.DatabaseError && err.severity === 'ERROR';

/** `pool` as core's driver: statements once `ready` (the migration) resolved. */
export function postgresDriver(
  pool: pg.Pool,
  options: { prepare: boolean; ready: Promise<void> },
): SqlDriver<PostgresSql> {
  const run = statementRunner(pool, options.prepare, options.ready);
  const size = (pool as { options?: { max?: number } }).options?.max ?? 10;
  return {
    run: (statement, values) => run(statement, values),
    rolledBack: rolledBackWhole,
    transaction: (work) =>
      readCommitted(pool, (client) => work((statement, values) => run(statement, values, client))),
    connections: {
      size,
      full: () => pool.waitingCount > 0 || (pool.idleCount === 0 && pool.totalCount >= size),
      hold: async () => {
        const { client, release } = await lease(pool);
        return { run: (statement, values) => run(statement, values, client), release };
      },
      refusedWhole,
    },
  };
}
