/**
 * The native MySQL / MariaDB backend: the SQL family's backend, wired to this package's parts.
 * The pool it opens (connection.ts), the migration (migrate.ts), the statements
 * (statements.ts) and how they run (runner.ts), the mutations (writes.ts), and what diagnose()
 * checks.
 */
import { type Leftovers, openAdapter } from '@ckpt/core/adapter';
import { countInFlight, SqlBackend } from '@ckpt/core/sql';
import type { Pool } from 'mysql2/promise';
import { connect, type MysqlOptions } from './connection.js';
import { destroyNamespace } from './destroy.js';
import { diagnose } from './diagnose.js';
import { mysqlHints } from './error-hints.js';
import { migrate } from './migrate.js';
import { type MysqlStatement, statementRunner } from './runner.js';
import { tables } from './schema.js';
import { backendStatements } from './statements.js';
import { mysqlWrites } from './writes.js';

/** The MySQL / MariaDB backend (see `mysql()`). */
export class MysqlBackend extends SqlBackend<MysqlStatement> {
  readonly namespace: string;
  /** The promise pool queries run on. */
  readonly pool: Pool;
  /**
   * How many batches of checkpoints that waited for a connection were sent, and how many calls
   * they carried (both 0 without group commit): to see whether the pool is the bottleneck.
   */
  get batched(): { batches: number; calls: number } {
    return this.#batched();
  }
  readonly #batched: () => { batches: number; calls: number };

  constructor(options: MysqlOptions) {
    const connection = connect(options);
    const { pool, owned, namespace, existing } = connection;
    const opening = openAdapter(
      () => migrate(pool, namespace, existing),
      async () => {
        if (owned) await pool.end();
      },
    );
    const runOn = statementRunner(pool, connection.preparedStatements, opening.migrated);
    const counted = countInFlight<MysqlStatement>((statement, values) => runOn(statement, values));
    const statements = backendStatements(namespace);
    const { writes, batched } = mysqlWrites({
      pool,
      counted,
      runOn,
      prepared: connection.preparedStatements,
      statements,
      packetBytes: opening.migrated,
      groupCommit: connection.groupCommit ? connection.poolSize : undefined,
    });
    super({
      name: 'mysql',
      runner: { run: counted.run },
      statements,
      // Data, transcript items and state values are bytes since schema version 8.
      valueColumns: 'bytes',
      writes,
      opening,
      // The namespace's procedures and tables (see destroy.ts).
      destroy: () => destroyNamespace(pool, namespace),
      diagnose: () => diagnose(pool, namespace),
      errorHint: mysqlHints(connection.address),
    });
    this.pool = pool;
    this.namespace = namespace;
    this.#batched = batched;
  }

  /** Where MySQL (InnoDB) keeps the values a rewrite or delete replaced. */
  leftovers(): Leftovers {
    const t = tables(this.namespace);
    return {
      remain: `Replaced values remain in InnoDB's undo logs until purge removes them (once no transaction reads them), and in the freed space of the pages of ${[t.bodies, t.transcripts, t.state].join(', ')} until InnoDB writes over it; OPTIMIZE TABLE on those tables writes them anew. Copies remain in the redo log until it is written over, in binary logs until they expire, and in backups made before.`,
    };
  }
}
