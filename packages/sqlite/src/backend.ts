/**
 * The native SQLite backend: the SQL family's backend, wired to this package's parts. The file
 * it opens and migrates (connection.ts, migrate.ts), the statements (statements.ts) and how
 * they run (runner.ts), the mutations (writes.ts) and who commits them: the event loop's
 * connection, or the writer thread (writer-thread.ts), in groups (group-commit.ts) or alone;
 * what diagnose() checks; and what stays of replaced values in the file (leftovers.ts).
 */

import type { Worker } from 'node:worker_threads';
import { type Leftovers, openAdapter } from '@ckpt/core/adapter';
import { SqlBackend, type SqlResult } from '@ckpt/core/sql';
import type Database from 'better-sqlite3';
import { aloneHere } from './alone-here.js';
import { holdsNoValues, markClean } from './clean-file.js';
import {
  type OpenedDatabase,
  openDatabase,
  overwriteDeleted,
  type SqliteOptions,
} from './connection.js';
import { diagnose } from './diagnose.js';
import { GroupCommit } from './group-commit.js';
import { leftovers } from './leftovers.js';
import { bind, execute, firstOf, type SqliteStatement } from './runner.js';
import { checkpointMigrations, tables } from './schema.js';
import { backendStatements } from './statements.js';
import { batchCommitter, type Outcome, type WriteCall } from './write-call.js';
import { WriterThread } from './writer-thread.js';
import { sqliteTransactions, sqliteWrites, type Write } from './writes.js';

/** The SQLite backend (see `sqlite()`). */
export class SqliteBackend extends SqlBackend<SqliteStatement> {
  /**
   * The better-sqlite3 connection, for inspection; the backend owns and closes it. It runs the
   * reads, and the writes too unless the writer thread does.
   */
  readonly db: Database.Database;
  readonly namespace: string;
  readonly synchronous: OpenedDatabase['synchronous'];
  /**
   * Where the writes commit, for inspection: `thread` is the worker thread running now (null
   * before the first write and after close); null where the event loop commits them.
   */
  readonly writer: { readonly thread: Worker | null } | null;

  constructor(options: SqliteOptions) {
    // Migrated as it opens, synchronously: a file it cannot use is refused at once.
    const { db, namespace, synchronous, created } = openDatabase(
      options,
      'checkpoints_schema_version',
      checkpointMigrations,
    );
    const writer =
      options.worker !== false && !db.memory
        ? new WriterThread({ path: db.name, namespace, synchronous, secureDelete: false })
        : null;
    const t = tables(namespace);
    const statements = backendStatements(db, t);
    const here = () => batchCommitter(db, sqliteTransactions(db, t, statements.reads));
    // A call alone commits here only while no caller of a group is resuming (see aloneHere).
    let group: GroupCommit | null = null;
    const commit =
      writer === null ? here() : aloneHere(db, writer, here, () => group?.quiet ?? true);
    group = options.groupCommit === false ? null : new GroupCommit(commit);
    const opening = openAdapter(
      () => undefined,
      async () => {
        try {
          // The calls handed in before close() still commit: those gathering for a group too.
          await group?.idle();
          await writer?.close();
        } finally {
          if (db.open) db.close();
        }
      },
    );
    const write: Write = async <T>(call: WriteCall, bytes = 0) => {
      if (group !== null) return group.run<T>(call, bytes);
      const [outcome] = (await commit([call])) as [Outcome];
      if ('error' in outcome) throw outcome.error;
      return outcome.value as T;
    };
    const { writes, dropTables } = sqliteWrites(write);
    // The state table's writes go to the connection that writes; its reads stay here.
    const run =
      writer === null
        ? execute
        : <Row>(statement: SqliteStatement, values: unknown[]): Promise<SqlResult<Row>> =>
            statement.statement.reader
              ? execute<Row>(statement, values)
              : write({
                  name: 'statement',
                  args: [statement.statement.source, bind(statement, values)],
                });
    super({
      name: 'sqlite',
      driver: { run, first: async (statement, values) => firstOf(statement, values) },
      statements,
      // Data, transcript items and state values (schema.ts, step 4); the mutations store them
      // as bytes themselves (writes.ts).
      valueColumns: 'bytes',
      // The change log's read is a lookup of the rowid b-tree's end, some microseconds on the
      // event loop: often, so that a change reaches a watcher of another process soon.
      changesPollMs: 25,
      writes,
      opening,
      // Every table of the namespace, in one transaction. Where the writer thread never
      // started (nothing was written through this backend), on this connection: starting a
      // thread only to drop the tables takes far longer than the drop.
      destroy: async () => {
        if (writer === null || writer.thread !== null) return dropTables();
        const [outcome] = here()([{ name: 'dropTables', args: [] }]) as [Outcome];
        if ('error' in outcome) throw outcome.error;
      },
      diagnose: () => diagnose(db, namespace, synchronous, this.#encrypted),
    });
    this.db = db;
    this.namespace = namespace;
    this.synchronous = synchronous;
    this.writer = writer;
    this.#writerThread = writer;
    this.#created = created;
  }

  readonly #writerThread: WriterThread | null;
  readonly #created: boolean;
  /** Whether a store whose codecs encrypt was made on this backend. */
  #encrypted = false;

  /**
   * Every connection overwrites what it deletes from now on, the writer thread's too; a file
   * this backend made and nothing has written to yet is recorded as holding no earlier value.
   */
  onEncryptedValues(): void {
    if (this.#encrypted) return;
    this.#encrypted = true;
    overwriteDeleted(this.db);
    this.#writerThread?.secureDelete();
    if (this.#created && holdsNoValues(this.db, this.namespace)) {
      markClean(this.db, this.namespace, 'created');
    }
  }

  leftovers(): Leftovers {
    return leftovers(this.db, () => {
      if (this.#encrypted) markClean(this.db, this.namespace, 'vacuumed');
    });
  }
}
