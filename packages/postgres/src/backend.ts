/**
 * The native PostgreSQL backend: the SQL family's backend, given this package's parts. The
 * pool it opens (connection.ts), the migration (migrate.ts), the driver that runs statements
 * on the pool (driver.ts), the statements (statements.ts), and what diagnose() checks. Core
 * runs the writes (see SqlWriteStatements).
 */
import { type Leftovers, openAdapter } from '@ckpt/core/adapter';
import { SqlBackend } from '@ckpt/core/sql';
import type pg from 'pg';
import { postgresChangeLog } from './change-log.js';
import { connect, type PostgresOptions } from './connection.js';
import { destroySchema } from './destroy.js';
import { diagnose } from './diagnose.js';
import { postgresDriver } from './driver.js';
import { postgresHints } from './error-hints.js';
import { migrate } from './migrate.js';
import type { PostgresSql } from './runner.js';
import { backendStatements } from './statements.js';

/** The PostgreSQL backend (see `postgres()`). */
export class PostgresBackend extends SqlBackend<PostgresSql> {
  readonly namespace: string;
  /** The pool queries run on. */
  readonly pool: pg.Pool;

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
      listen,
    } = connect(options);
    let changeLog: ReturnType<typeof postgresChangeLog> | undefined;
    const opening = openAdapter(
      () => migrate(pool, namespace, existing),
      async () => {
        await changeLog?.close();
        if (owned && !pool.ended) await pool.end();
      },
    );
    changeLog = postgresChangeLog(pool, namespace, opening.migrated, listen);
    super({
      name: 'postgres',
      driver: postgresDriver(pool, { prepare: preparedStatements, ready: opening.migrated }),
      statements: backendStatements(namespace),
      changeLog,
      groupCommit,
      // Data, transcript items and state values are bytea (schema version 7).
      valueColumns: 'bytes',
      opening,
      // Drop the schema when ckpt created it; else ckpt's tables and functions (see destroy.ts).
      destroy: () => destroySchema(pool, namespace),
      diagnose: () => diagnose(pool, namespace),
      errorHint: postgresHints(address, defaultDatabase),
    });
    this.pool = pool;
    this.namespace = namespace;
  }

  /** Where PostgreSQL keeps the values a rewrite or delete replaced. */
  leftovers(): Leftovers {
    const tables = ['bodies', 'transcripts', 'state'].map((t) => `"${this.namespace}".${t}`);
    return {
      remain: `Replaced values remain in dead row versions of ${tables.join(', ')} until VACUUM (autovacuum runs it once enough rows changed) frees their space, and in that space until PostgreSQL writes over it; VACUUM FULL on those tables writes them anew. Copies remain in the server's WAL until it is recycled, in its archive and replicas' WAL, and in backups made before.`,
    };
  }
}
