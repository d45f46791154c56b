/**
 * The native MySQL / MariaDB backend: the SQL family's backend, given this package's parts.
 * The pool it opens (connection.ts), the migration (migrate.ts), the driver that runs
 * statements on the pool (driver.ts), the statements (statements.ts), the import it runs
 * itself (import.ts), and what diagnose() checks. Core runs the other writes (see
 * SqlWriteStatements).
 */
import { type Leftovers, openAdapter } from '@ckpt/core/adapter';
import { SqlBackend } from '@ckpt/core/sql';
import type { Pool } from 'mysql2/promise';
import { mysqlChangeLog } from './change-log.js';
import { connect, type MysqlOptions } from './connection.js';
import { destroyNamespace } from './destroy.js';
import { diagnose } from './diagnose.js';
import { mysqlDriver } from './driver.js';
import { mysqlHints } from './error-hints.js';
import { importSession } from './import.js';
import { migrate } from './migrate.js';
import type { MysqlStatement } from './runner.js';
import { tables } from './schema.js';
import { backendStatements } from './statements.js';

/** The MySQL / MariaDB backend (see `mysql()`). */
export class MysqlBackend extends SqlBackend<MysqlStatement> {
  readonly namespace: string;
  /** The promise pool queries run on. */
  readonly pool: Pool;

  constructor(options: MysqlOptions) {
    const connection = connect(options);
    const { pool, owned, namespace, existing } = connection;
    const opening = openAdapter(
      () => migrate(pool, namespace, existing),
      async () => {
        if (owned) await pool.end();
      },
    );
    const statements = backendStatements(namespace);
    const packetBytes = opening.migrated;
    super({
      name: 'mysql',
      driver: mysqlDriver(pool, {
        prepare: connection.preparedStatements,
        packetBytes,
        size: connection.poolSize,
      }),
      statements,
      writes: {
        importSession: (input) =>
          importSession({ pool, statements: statements.imports, packetBytes }, input),
      },
      groupCommit: connection.groupCommit,
      changeLog: mysqlChangeLog(pool, namespace, packetBytes),
      // Data, transcript items and state values are bytes since schema version 8.
      valueColumns: 'bytes',
      opening,
      // The namespace's procedures and tables (see destroy.ts).
      destroy: () => destroyNamespace(pool, namespace),
      diagnose: () => diagnose(pool, namespace),
      errorHint: mysqlHints(connection.address),
    });
    this.pool = pool;
    this.namespace = namespace;
  }

  /** Where MySQL (InnoDB) keeps the values a rewrite or delete replaced. */
  leftovers(): Leftovers {
    const t = tables(this.namespace);
    return {
      remain: `Replaced values remain in InnoDB's undo logs until purge removes them (once no transaction reads them), and in the freed space of the pages of ${[t.bodies, t.transcripts, t.state].join(', ')} until InnoDB writes over it; OPTIMIZE TABLE on those tables writes them anew. Copies remain in the redo log until it is written over, in binary logs until they expire, and in backups made before.`,
    };
  }
}
