/**
 * The native SQLite backend. Reads and state are the SQL family's, one statement each. Each
 * mutation is a transaction of its own statements, run without yielding (better-sqlite3 is
 * synchronous) in BEGIN IMMEDIATE, so a writer takes the database's write lock before it reads
 * what it will change, and several processes on one file serialise their writes instead of
 * deadlocking.
 */
import { existsSync, statSync } from 'node:fs';
import type {
  AppendInput,
  AppendResult,
  Diagnosis,
  ForkInput,
  ForkResult,
  ImportInput,
  RollbackInput,
  RollbackResult,
} from '@ckpt/core/adapter';
import {
  type CheckpointRow,
  checkpointFromRow,
  importedSessionRow,
  keyValueSql,
  SqlBackend,
  type SqlReads,
  type SqlResult,
} from '@ckpt/core/sql';
import type Database from 'better-sqlite3';
import { GroupCommit } from './group-commit.js';
import { type OpenedDatabase, openDatabase, type SqliteOptions } from './open-database.js';
import { checkpointMigrations, SCHEMA_VERSION, tables } from './schema.js';
import {
  execute,
  firstOf,
  prepare,
  prepareAll,
  rowsOf,
  type SqliteStatement,
} from './statements.js';

type Tables = ReturnType<typeof tables>;

/** A checkpoint's row, where its data and transcript items are named by the ids of their rows. */
interface CheckpointRefs {
  seq: number;
  parent: number | null;
  created_at: number;
  metadata: string;
  body: number;
  transcript: number | null;
}

/** `$2` (null: the head) and its ancestors in session `$1`, newest first, at most `$3`, with `columns`. */
function chain(t: Tables, columns: string): string {
  // The walk carries each row's columns, so that nothing joins the checkpoints table again.
  return `
    WITH RECURSIVE chain (seq, parent, created_at, metadata, body, transcript, depth) AS (
      SELECT seq, parent, created_at, metadata, body, transcript, 1 FROM ${t.checkpoints}
       WHERE session_id = $1
         AND seq = coalesce($2, (SELECT head FROM ${t.sessions} WHERE id = $1))
      UNION ALL
      SELECT c.seq, c.parent, c.created_at, c.metadata, c.body, c.transcript, chain.depth + 1
        FROM chain JOIN ${t.checkpoints} c ON c.session_id = $1 AND c.seq = chain.parent
       WHERE chain.depth < $3
    )
    SELECT ${columns} FROM chain ORDER BY chain.depth`;
}

/** The reads every SQL backend has, in SQLite's SQL. */
function reads(t: Tables): SqlReads<string> {
  return {
    loadHead: `
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at,
             s.metadata, b.data
        FROM ${t.sessions} s JOIN ${t.bodies} b ON b.id = s.head_body
       WHERE s.id = $1`,
    loadSeq: `
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
        FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.id = c.body
       WHERE c.session_id = $1 AND c.seq = $2`,
    loadByKey: `
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
        FROM ${t.idempotency} i
        JOIN ${t.checkpoints} c ON c.session_id = i.session_id AND c.seq = i.seq
        JOIN ${t.bodies} b ON b.id = c.body
       WHERE i.session_id = $1 AND i.key = $2`,
    session: `SELECT * FROM ${t.sessions} WHERE id = $1`,
    listCheckpoints: `
      SELECT seq, parent, created_at, metadata FROM ${t.checkpoints}
       WHERE session_id = $1 AND seq < coalesce($2, 9007199254740992)
       ORDER BY seq DESC LIMIT $3`,
    lineage: chain(
      t,
      `chain.seq, chain.parent, chain.created_at,
       CASE WHEN $4 THEN coalesce((SELECT items FROM ${t.transcripts} WHERE id = chain.transcript), '[]')
       END AS transcript`,
    ),
    exportCheckpoints: `
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data,
             coalesce((SELECT items FROM ${t.transcripts} WHERE id = c.transcript), '[]') AS transcript
        FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.id = c.body
       WHERE c.session_id = $1 AND c.seq > coalesce($2, 0)
       ORDER BY c.seq LIMIT $3`,
    stateScopes: `
      SELECT DISTINCT scope FROM ${t.state} WHERE scope > coalesce($1, '') ORDER BY scope LIMIT $2`,
    sessionsFirst: `SELECT * FROM ${t.sessions} ORDER BY updated_at DESC, id DESC LIMIT $1`,
    sessionsAfter: `
      SELECT * FROM ${t.sessions} WHERE (updated_at, id) < ($1, $2)
       ORDER BY updated_at DESC, id DESC LIMIT $3`,
  };
}

/** The statements only the mutations run, inside their transactions. */
function mutations(db: Database.Database, t: Tables) {
  return {
    headOf: db.prepare(`SELECT head, last_seq FROM ${t.sessions} WHERE id = ?`),
    idempotent: db.prepare(`SELECT seq FROM ${t.idempotency} WHERE session_id = ? AND key = ?`),
    insertBody: db.prepare(`INSERT INTO ${t.bodies} (data) VALUES (?)`),
    insertTranscript: db.prepare(`INSERT INTO ${t.transcripts} (items) VALUES (?)`),
    insertCheckpoint: db.prepare(`
      INSERT INTO ${t.checkpoints} (session_id, seq, parent, created_at, metadata, body, transcript)
      VALUES (?, ?, ?, ?, ?, ?, ?)`),
    upsertSession: db.prepare(`
      INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_parent, head_created_at,
                                 head_body, metadata, created_at, updated_at)
      VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET head = excluded.head, last_seq = excluded.last_seq,
        checkpoints = checkpoints + 1, head_parent = excluded.head_parent,
        head_created_at = excluded.head_created_at, head_body = excluded.head_body,
        metadata = excluded.metadata, updated_at = excluded.updated_at`),
    insertIdempotency: db.prepare(
      `INSERT INTO ${t.idempotency} (session_id, key, seq) VALUES (?, ?, ?)`,
    ),
    checkpointRow: db.prepare(`SELECT * FROM ${t.checkpoints} WHERE session_id = ? AND seq = ?`),
    chainRefs: prepare(
      db,
      chain(
        t,
        'chain.seq, chain.parent, chain.created_at, chain.metadata, chain.body, chain.transcript',
      ),
    ),
    moveHead: db.prepare(`
      UPDATE ${t.sessions} SET head = ?, head_parent = ?, head_created_at = ?, head_body = ?,
                               metadata = ?, updated_at = ?
       WHERE id = ?`),
    copyBody: db.prepare(
      `INSERT INTO ${t.bodies} (data) SELECT data FROM ${t.bodies} WHERE id = ?`,
    ),
    copyTranscript: db.prepare(
      `INSERT INTO ${t.transcripts} (items) SELECT items FROM ${t.transcripts} WHERE id = ?`,
    ),
    insertFork: db.prepare(`
      INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, forked_from_id, forked_from_seq,
                                 head_parent, head_created_at, head_body, metadata, created_at, updated_at)
      VALUES (:newId, :at, :at, :count, :id, :at, :parent, :createdAt, :body, :metadata, :now, :now)`),
    pruneThreshold: db.prepare(
      `SELECT seq FROM ${t.checkpoints} WHERE session_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?`,
    ),
    // Prune and delete remove bodies and transcripts first, while the rows naming them exist.
    pruneBodies: db.prepare(`
      DELETE FROM ${t.bodies} WHERE id IN (SELECT body FROM ${t.checkpoints}
       WHERE session_id = :id AND seq < :below AND seq <> :head)`),
    pruneTranscripts: db.prepare(`
      DELETE FROM ${t.transcripts} WHERE id IN (SELECT transcript FROM ${t.checkpoints}
       WHERE session_id = :id AND seq < :below AND seq <> :head)`),
    pruneCheckpoints: db.prepare(
      `DELETE FROM ${t.checkpoints} WHERE session_id = :id AND seq < :below AND seq <> :head`,
    ),
    countDown: db.prepare(`UPDATE ${t.sessions} SET checkpoints = checkpoints - ? WHERE id = ?`),
    deleteBodies: db.prepare(
      `DELETE FROM ${t.bodies} WHERE id IN (SELECT body FROM ${t.checkpoints} WHERE session_id = ?)`,
    ),
    deleteTranscripts: db.prepare(`
      DELETE FROM ${t.transcripts}
       WHERE id IN (SELECT transcript FROM ${t.checkpoints} WHERE session_id = ?)`),
    deleteCheckpoints: db.prepare(`DELETE FROM ${t.checkpoints} WHERE session_id = ?`),
    deleteIdempotency: db.prepare(`DELETE FROM ${t.idempotency} WHERE session_id = ?`),
    deleteSession: db.prepare(`DELETE FROM ${t.sessions} WHERE id = ?`),
    insertImported: db.prepare(`
      INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, forked_from_id, forked_from_seq,
                                 head_parent, head_created_at, head_body, metadata, created_at, updated_at)
      VALUES (:id, :head, :last_seq, :checkpoints, :forked_from_id, :forked_from_seq, :head_parent,
              :head_created_at, :head_body, :metadata, :created_at, :updated_at)`),
  };
}

/** The SQLite backend (see `sqlite()`). */
export class SqliteBackend extends SqlBackend<SqliteStatement> {
  readonly name = 'sqlite';
  /** The better-sqlite3 connection, for inspection; the backend owns and closes it. */
  readonly db: Database.Database;
  readonly namespace: string;
  readonly synchronous: OpenedDatabase['synchronous'];
  // Built once: better-sqlite3 wraps a function in BEGIN IMMEDIATE … COMMIT (or ROLLBACK).
  readonly #append: Database.Transaction<(input: AppendInput) => AppendResult>;
  readonly #rollback: Database.Transaction<(input: RollbackInput) => RollbackResult>;
  readonly #fork: Database.Transaction<(input: ForkInput) => ForkResult>;
  readonly #prune: Database.Transaction<(sessionId: string, keepLast: number) => number>;
  readonly #delete: Database.Transaction<(sessionId: string) => boolean>;
  readonly #import: Database.Transaction<(input: ImportInput) => 'imported' | 'exists'>;
  readonly #dropTables: Database.Transaction<() => void>;
  /** Where mutations wait for the next group; null when each commits alone. */
  readonly #group: GroupCommit | null;

  constructor(options: SqliteOptions) {
    const opened = openDatabase(options, 'checkpoints_schema_version', checkpointMigrations);
    const t = tables(opened.namespace);
    const read = prepareAll(opened.db, reads(t));
    super({
      reads: read,
      state: prepareAll(
        opened.db,
        keyValueSql({ table: t.state, keys: ['scope', 'key'], onConflict: 'ON CONFLICT' }),
      ),
    });
    this.db = opened.db;
    this.namespace = opened.namespace;
    this.synchronous = opened.synchronous;
    this.#group = options.groupCommit === false ? null : new GroupCommit(this.db);
    const sql = mutations(this.db, t);
    // Every table of the namespace, the KV store's and the meta table included; other
    // namespaces' tables in the file, and the file, stay.
    this.#dropTables = this.db.transaction(() => {
      for (const table of Object.values(t)) this.db.exec(`DROP TABLE IF EXISTS ${table}`);
    });

    this.#append = this.db.transaction((input: AppendInput): AppendResult => {
      const id = input.sessionId;
      const session = sql.headOf.get(id) as { head: number; last_seq: number } | undefined;
      if (session && input.idempotencyKey !== undefined) {
        const seen = sql.idempotent.get(id, input.idempotencyKey) as { seq: number } | undefined;
        if (seen) {
          const [row] = rowsOf<CheckpointRow>(read.loadSeq, [id, seen.seq]);
          return {
            status: 'replayed',
            seq: seen.seq,
            checkpoint: row ? checkpointFromRow(row) : null,
          };
        }
      }
      const head = session?.head ?? null;
      if (input.expectedHead !== undefined && input.expectedHead !== head) {
        return { status: 'conflict', head };
      }
      const seq = (session?.last_seq ?? 0) + 1;
      const body = sql.insertBody.run(input.data).lastInsertRowid;
      const transcript =
        input.transcript === '[]'
          ? null
          : sql.insertTranscript.run(input.transcript).lastInsertRowid;
      sql.insertCheckpoint.run(id, seq, head, input.now, input.metadata, body, transcript);
      const now = input.now;
      sql.upsertSession.run(id, seq, seq, head, now, body, input.metadata, now, now);
      if (input.idempotencyKey !== undefined) {
        sql.insertIdempotency.run(id, input.idempotencyKey, seq);
      }
      return { status: 'written', seq, parent: head };
    });

    this.#rollback = this.db.transaction((input: RollbackInput): RollbackResult => {
      const session = sql.headOf.get(input.sessionId) as { head: number } | undefined;
      if (!session) return { status: 'not_found', missing: 'session' };
      if (input.expectedHead !== undefined && input.expectedHead !== session.head) {
        return { status: 'conflict', head: session.head };
      }
      const target = sql.checkpointRow.get(input.sessionId, input.seq) as
        | CheckpointRefs
        | undefined;
      if (!target) return { status: 'not_found', missing: 'seq' };
      const { seq, parent, created_at, body, metadata } = target;
      sql.moveHead.run(seq, parent, created_at, body, metadata, input.now, input.sessionId);
      return { status: 'done' };
    });

    this.#fork = this.db.transaction((input: ForkInput): ForkResult => {
      const source = sql.headOf.get(input.sessionId) as { head: number } | undefined;
      if (!source) return { status: 'not_found', missing: 'session' };
      const at = input.atSeq ?? source.head;
      if (!sql.checkpointRow.get(input.sessionId, at))
        return { status: 'not_found', missing: 'seq' };
      if (sql.headOf.get(input.newId)) return { status: 'exists' };
      const rows = rowsOf<CheckpointRefs>(sql.chainRefs, [
        input.sessionId,
        at,
        Number.MAX_SAFE_INTEGER,
      ]);
      // Each copy gets bodies of its own, so that nothing the two sessions do later is shared.
      let headBody = 0;
      for (const row of rows) {
        const body = sql.copyBody.run(row.body).lastInsertRowid;
        const transcript =
          row.transcript === null ? null : sql.copyTranscript.run(row.transcript).lastInsertRowid;
        sql.insertCheckpoint.run(
          input.newId,
          row.seq,
          row.parent,
          row.created_at,
          row.metadata,
          body,
          transcript,
        );
        if (row.seq === at) headBody = Number(body);
      }
      const top = rows[0]!;
      sql.insertFork.run({
        newId: input.newId,
        id: input.sessionId,
        at,
        count: rows.length,
        parent: top.parent,
        createdAt: top.created_at,
        body: headBody,
        metadata: top.metadata,
        now: input.now,
      });
      return { status: 'done', seq: at };
    });

    this.#prune = this.db.transaction((sessionId: string, keepLast: number): number => {
      const session = sql.headOf.get(sessionId) as { head: number } | undefined;
      if (!session) return 0;
      // The keepLast-th highest seq: everything below it goes, except the head.
      const lowestKept = sql.pruneThreshold.get(sessionId, keepLast - 1) as
        | { seq: number }
        | undefined;
      if (!lowestKept) return 0;
      const range = { id: sessionId, below: lowestKept.seq, head: session.head };
      sql.pruneBodies.run(range);
      sql.pruneTranscripts.run(range);
      const removed = sql.pruneCheckpoints.run(range).changes;
      if (removed > 0) sql.countDown.run(removed, sessionId);
      return removed;
    });

    this.#delete = this.db.transaction((sessionId: string): boolean => {
      sql.deleteBodies.run(sessionId);
      sql.deleteTranscripts.run(sessionId);
      sql.deleteCheckpoints.run(sessionId);
      sql.deleteIdempotency.run(sessionId);
      return sql.deleteSession.run(sessionId).changes > 0;
    });

    this.#import = this.db.transaction((input: ImportInput): 'imported' | 'exists' => {
      const id = input.sessionId;
      if (sql.headOf.get(id)) {
        if (!input.replace) return 'exists';
        this.#delete(id);
      }
      let headBody = 0;
      for (const cp of input.checkpoints) {
        const body = sql.insertBody.run(cp.data).lastInsertRowid;
        const transcript =
          cp.transcript === '[]' ? null : sql.insertTranscript.run(cp.transcript).lastInsertRowid;
        sql.insertCheckpoint.run(
          id,
          cp.seq,
          cp.parent,
          cp.createdAt,
          cp.metadata,
          body,
          transcript,
        );
        if (cp.seq === input.head) headBody = Number(body);
      }
      sql.insertImported.run({ ...importedSessionRow(input), head_body: headBody });
      return 'imported';
    });
  }

  protected execute<Row>(statement: SqliteStatement, values: unknown[]): Promise<SqlResult<Row>> {
    return execute(statement, values);
  }

  protected override async first<Row>(
    statement: SqliteStatement,
    values: unknown[],
  ): Promise<Row | undefined> {
    return firstOf<Row>(statement, values);
  }

  async append(input: AppendInput): Promise<AppendResult> {
    const bytes = input.data.length + input.metadata.length + input.transcript.length;
    return this.#write(this.#append, [input], bytes);
  }

  async rollback(input: RollbackInput): Promise<RollbackResult> {
    return this.#write(this.#rollback, [input]);
  }

  async fork(input: ForkInput): Promise<ForkResult> {
    return this.#write(this.#fork, [input]);
  }

  async prune(sessionId: string, keepLast: number): Promise<number> {
    return this.#write(this.#prune, [sessionId, keepLast]);
  }

  async delete(sessionId: string): Promise<boolean> {
    return this.#write(this.#delete, [sessionId]);
  }

  async importSession(input: ImportInput): Promise<'imported' | 'exists'> {
    let bytes = 0;
    for (const cp of input.checkpoints)
      bytes += cp.data.length + cp.metadata.length + cp.transcript.length;
    return this.#write(this.#import, [input], bytes);
  }

  /** Run a write transaction: with the next group, or alone when group commit is off. */
  #write<A extends unknown[], T>(
    transaction: Database.Transaction<(...args: A) => T>,
    args: A,
    bytes = 0,
  ): Promise<T> {
    if (this.#group === null) return Promise.resolve(transaction.immediate(...args));
    return this.#group.run(transaction, args, bytes);
  }

  /** Drop every table of the namespace, in one transaction. */
  async destroy(): Promise<void> {
    await this.#write(this.#dropTables, []);
  }

  /** The schema version, the journal and sync settings, and the modes of the database's files. */
  async diagnose(): Promise<Diagnosis[]> {
    const t = tables(this.namespace);
    const version = this.db
      .prepare(`SELECT value FROM ${t.meta} WHERE key = 'checkpoints_schema_version'`)
      .pluck()
      .get();
    const found: Diagnosis[] = [
      {
        check: 'schema',
        status: 'ok',
        detail: `namespace '${this.namespace}' at version ${version} (this @ckpt/sqlite writes ${SCHEMA_VERSION})`,
      },
    ];
    const journal = String(this.db.pragma('journal_mode', { simple: true }));
    const durable = this.synchronous === 'full' || this.synchronous === 'extra';
    found.push({
      check: 'durability',
      status: durable && journal === 'wal' ? 'ok' : 'warn',
      detail: `journal_mode = ${journal}, synchronous = ${this.synchronous}: ${
        durable
          ? 'a call that resolved survives a crash of the process or the machine'
          : this.synchronous === 'normal'
            ? 'the last calls before a power loss or crash of the machine may be lost'
            : 'a crash of the machine may lose calls or corrupt the file'
      }`,
      fix: "open the store with synchronous 'full' (the default): sqlite({ path, synchronous: 'full' }) or 'sqlite:./agent.db?synchronous=full'",
    });
    if (this.db.memory) return found;
    for (const file of [this.db.name, `${this.db.name}-wal`, `${this.db.name}-shm`]) {
      if (!existsSync(file)) continue;
      const mode = statSync(file).mode & 0o777;
      const shown = mode.toString(8).padStart(4, '0');
      found.push({
        check: 'file mode',
        status: (mode & 0o077) === 0 ? 'ok' : 'warn',
        detail: `${file} is ${shown}${(mode & 0o077) === 0 ? '' : ': others can read or write the sessions in it'}`,
        fix: `chmod 600 '${file}'`,
      });
    }
    return found;
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
