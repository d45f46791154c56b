/**
 * The native PostgreSQL backend: the SQL family's backend, wired to this package's parts. The
 * pool it opens (connection.ts), the migration (migrate.ts), the statements (statements.ts)
 * and how they run (runner.ts), the mutations (writes.ts), and what diagnose() checks.
 */
import { type Leftovers, openAdapter } from '@ckpt/core/adapter';
import { countInFlight, SqlBackend } from '@ckpt/core/sql';
import type pg from 'pg';
import { connect, type PostgresOptions } from './connection.js';
import { destroySchema } from './destroy.js';
import { diagnose } from './diagnose.js';
import { postgresHints } from './error-hints.js';
import { migrate } from './migrate.js';
import { type PostgresSql, statementRunner } from './runner.js';
import { backendStatements } from './statements.js';
import { postgresWrites } from './writes.js';

/** The PostgreSQL backend (see `postgres()`). */
export class PostgresBackend extends SqlBackend<PostgresSql> {
  readonly namespace: string;
  /** The pool queries run on. */
  readonly pool: pg.Pool;
  /**
   * How many batches of checkpoints that waited for a connection were sent, and how many calls
   * they carried (both 0 without group commit): to see whether the pool is the bottleneck.
   */
  get batched(): { batches: number; calls: number } {
    return this.#batched();
  }
  readonly #batched: () => { batches: number; calls: number };

  constructor(options: PostgresOptions) {
    const {
      pool,
      owned,
      address,
      defaultDatabase,
      namespace,
      existing,
      preparedStatements,
      groupCommit,
    } = connect(options);
    const opening = openAdapter(
      () => migrate(pool, namespace, existing),
      async () => {
        if (owned && !pool.ended) await pool.end();
      },
    );
    const runOn = statementRunner(pool, preparedStatements, opening.migrated);
    const counted = countInFlight<PostgresSql>((statement, values) => runOn(statement, values));
    const statements = backendStatements(namespace);
    const { writes, batched } = postgresWrites({
      pool,
      counted,
      runOn,
      statements,
      groupCommit,
    });
    super({
      name: 'postgres',
      runner: { run: counted.run },
      statements,
      // Data, transcript items and state values are bytea (schema version 7).
      valueColumns: 'bytes',
      writes,
      opening,
      // Drop the schema when ckpt created it; else ckpt's tables and functions (see destroy.ts).
      destroy: () => destroySchema(pool, namespace),
      diagnose: () => diagnose(pool, namespace),
      errorHint: postgresHints(address, defaultDatabase),
    });
    this.pool = pool;
    this.namespace = namespace;
    this.#batched = batched;
  }

  /** Where PostgreSQL keeps the values a rewrite or delete replaced. */
  leftovers(): Leftovers {
    const tables = ['bodies', 'transcripts', 'state'].map((t) => `"${this.namespace}".${t}`);
    return {
      remain: `Replaced values remain in dead row versions of ${tables.join(', ')} until VACUUM (autovacuum runs it once enough rows changed) frees their space, and in that space until PostgreSQL writes over it; VACUUM FULL on those tables writes them anew. Copies remain in the server's WAL until it is recycled, in its archive and replicas' WAL, and in backups made before.`,
    };
  }
}
