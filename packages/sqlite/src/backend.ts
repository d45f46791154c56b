/**
 * The native SQLite backend: the SQL family's backend, wired to this package's parts. The file
 * it opens and migrates (connection.ts, migrate.ts), the statements (statements.ts) and how
 * they run (runner.ts), the mutations (writes.ts), and what diagnose() checks.
 */
import { openAdapter } from '@ckpt/core/adapter';
import { SqlBackend } from '@ckpt/core/sql';
import type Database from 'better-sqlite3';
import { type OpenedDatabase, openDatabase, type SqliteOptions } from './connection.js';
import { diagnose } from './diagnose.js';
import { execute, firstOf, type SqliteStatement } from './runner.js';
import { checkpointMigrations, tables } from './schema.js';
import { backendStatements } from './statements.js';
import { sqliteWrites } from './writes.js';

/** The SQLite backend (see `sqlite()`). */
export class SqliteBackend extends SqlBackend<SqliteStatement> {
  /** The better-sqlite3 connection, for inspection; the backend owns and closes it. */
  readonly db: Database.Database;
  readonly namespace: string;
  readonly synchronous: OpenedDatabase['synchronous'];

  constructor(options: SqliteOptions) {
    // Migrated as it opens, synchronously: a file it cannot use is refused at once.
    const { db, namespace, synchronous } = openDatabase(
      options,
      'checkpoints_schema_version',
      checkpointMigrations,
    );
    const opening = openAdapter(
      () => undefined,
      () => {
        if (db.open) db.close();
      },
    );
    const t = tables(namespace);
    const statements = backendStatements(db, t);
    const { writes, dropTables } = sqliteWrites(
      db,
      t,
      statements.reads,
      options.groupCommit !== false,
    );
    super({
      name: 'sqlite',
      runner: { run: execute, first: async (statement, values) => firstOf(statement, values) },
      statements,
      writes,
      opening,
      // Every table of the namespace, in one transaction.
      destroy: dropTables,
      diagnose: () => diagnose(db, namespace, synchronous),
    });
    this.db = db;
    this.namespace = namespace;
    this.synchronous = synchronous;
  }
}
