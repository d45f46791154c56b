/**
 * The native SQLite backend. better-sqlite3 is synchronous, so each method runs its
 * statements in one transaction without yielding; writes use BEGIN IMMEDIATE, so a writer
 * takes the database's write lock before it reads what it will change, and several processes
 * on one file serialise their writes instead of deadlocking.
 */
import {
  type AppendInput,
  type AppendResult,
  type CheckpointBackend,
  checkpointFromRow,
  checkpointInfoFromRow,
  type ForkInput,
  type ForkResult,
  lineageFromRow,
  prefixUpperBound,
  type RollbackInput,
  type RollbackResult,
  type SessionPosition,
  type StoredCheckpoint,
  type StoredCheckpointInfo,
  type StoredLineageEntry,
  type StoredSession,
  sessionFromRow,
} from '@ckpt/core';
import type Database from 'better-sqlite3';
import { type OpenedDatabase, openDatabase, type SqliteOptions } from './open-database.js';
import { checkpointMigrations, tables } from './schema.js';

interface SessionRow {
  id: string;
  head: number;
  last_seq: number;
  checkpoints: number;
  forked_from_id: string | null;
  forked_from_seq: number | null;
  metadata: string;
  created_at: number;
  updated_at: number;
}

interface CheckpointRow {
  seq: number;
  parent: number | null;
  created_at: number;
  metadata: string;
  body: number;
  transcript: number | null;
}

interface LoadedRow {
  seq: number;
  parent: number | null;
  created_at: number;
  metadata: string;
  data: string;
}

// Every statement, in one place and readable on its own.
function statements(db: Database.Database, t: ReturnType<typeof tables>) {
  // `:from` (null: the head) and its ancestors, newest first, at most `:limit`; the walk
  // carries each row's columns so that nothing joins the checkpoints table again.
  const chain = (columns: string) => `
    WITH RECURSIVE chain (seq, parent, created_at, metadata, body, transcript, depth) AS (
      SELECT seq, parent, created_at, metadata, body, transcript, 1 FROM ${t.checkpoints}
       WHERE session_id = :id
         AND seq = coalesce(:from, (SELECT head FROM ${t.sessions} WHERE id = :id))
      UNION ALL
      SELECT c.seq, c.parent, c.created_at, c.metadata, c.body, c.transcript, chain.depth + 1
        FROM chain JOIN ${t.checkpoints} c ON c.session_id = :id AND c.seq = chain.parent
       WHERE chain.depth < :limit
    )
    SELECT ${columns} FROM chain LEFT JOIN ${t.transcripts} x ON x.id = chain.transcript
     ORDER BY chain.depth`;
  return {
    session: db.prepare(`SELECT * FROM ${t.sessions} WHERE id = ?`),
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
    loadHead: db.prepare(`
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at,
             s.metadata, b.data
        FROM ${t.sessions} s JOIN ${t.bodies} b ON b.id = s.head_body
       WHERE s.id = ?`),
    loadSeq: db.prepare(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
        FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.id = c.body
       WHERE c.session_id = ? AND c.seq = ?`),
    checkpointRow: db.prepare(`SELECT * FROM ${t.checkpoints} WHERE session_id = ? AND seq = ?`),
    listCheckpoints: db.prepare(`
      SELECT seq, parent, created_at, metadata FROM ${t.checkpoints}
       WHERE session_id = :id AND seq < coalesce(:before, 9007199254740992)
       ORDER BY seq DESC LIMIT :limit`),
    lineage: db.prepare(chain('chain.seq, chain.parent, chain.created_at')),
    lineageWithTranscript: db.prepare(
      chain("chain.seq, chain.parent, chain.created_at, coalesce(x.items, '[]') AS transcript"),
    ),
    lineageRows: db.prepare(
      chain(
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
    sessionsFirst: db.prepare(
      `SELECT * FROM ${t.sessions} ORDER BY updated_at DESC, id DESC LIMIT ?`,
    ),
    sessionsAfter: db.prepare(`
      SELECT * FROM ${t.sessions} WHERE (updated_at, id) < (:updatedAt, :id)
       ORDER BY updated_at DESC, id DESC LIMIT :limit`),
    stateGet: db.prepare(`SELECT value FROM ${t.state} WHERE scope = ? AND key = ?`),
    stateSet: db.prepare(`
      INSERT INTO ${t.state} (scope, key, value) VALUES (?, ?, ?)
      ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value`),
    stateDelete: db.prepare(`DELETE FROM ${t.state} WHERE scope = ? AND key = ?`),
    stateInsert: db.prepare(
      `INSERT INTO ${t.state} (scope, key, value) VALUES (?, ?, ?) ON CONFLICT DO NOTHING`,
    ),
    stateReplace: db.prepare(
      `UPDATE ${t.state} SET value = ? WHERE scope = ? AND key = ? AND value = ?`,
    ),
    stateKeys: db.prepare(`
      SELECT key FROM ${t.state}
       WHERE scope = :scope AND key >= :prefix AND (:bound IS NULL OR key < :bound)
         AND (:after IS NULL OR key > :after)
       ORDER BY key LIMIT :limit`),
  };
}

/** The SQLite backend (see `sqlite()`). */
export class SqliteBackend implements CheckpointBackend {
  readonly name = 'sqlite';
  readonly capabilities = { concurrentWriters: true, listSessions: true, listStateKeys: true };
  /** The better-sqlite3 connection, for inspection; the backend owns and closes it. */
  readonly db: Database.Database;
  readonly namespace: string;
  readonly synchronous: OpenedDatabase['synchronous'];
  readonly #sql: ReturnType<typeof statements>;
  // Built once: better-sqlite3 wraps a function in BEGIN IMMEDIATE … COMMIT (or ROLLBACK).
  readonly #append: Database.Transaction<(input: AppendInput) => AppendResult>;
  readonly #rollback: Database.Transaction<(input: RollbackInput) => RollbackResult>;
  readonly #fork: Database.Transaction<(input: ForkInput) => ForkResult>;
  readonly #prune: Database.Transaction<(sessionId: string, keepLast: number) => number>;
  readonly #delete: Database.Transaction<(sessionId: string) => boolean>;

  constructor(options: SqliteOptions) {
    const opened = openDatabase(options, 'checkpoints_schema_version', checkpointMigrations);
    this.db = opened.db;
    this.namespace = opened.namespace;
    this.synchronous = opened.synchronous;
    const sql = statements(this.db, tables(this.namespace));
    this.#sql = sql;

    this.#append = this.db.transaction((input: AppendInput): AppendResult => {
      const id = input.sessionId;
      const session = sql.headOf.get(id) as Pick<SessionRow, 'head' | 'last_seq'> | undefined;
      if (session && input.idempotencyKey !== undefined) {
        const seen = sql.idempotent.get(id, input.idempotencyKey) as { seq: number } | undefined;
        if (seen) {
          const row = sql.loadSeq.get(id, seen.seq) as LoadedRow | undefined;
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
      const session = sql.headOf.get(input.sessionId) as Pick<SessionRow, 'head'> | undefined;
      if (!session) return { status: 'not_found', missing: 'session' };
      if (input.expectedHead !== undefined && input.expectedHead !== session.head) {
        return { status: 'conflict', head: session.head };
      }
      const target = sql.checkpointRow.get(input.sessionId, input.seq) as CheckpointRow | undefined;
      if (!target) return { status: 'not_found', missing: 'seq' };
      const { seq, parent, created_at, body, metadata } = target;
      sql.moveHead.run(seq, parent, created_at, body, metadata, input.now, input.sessionId);
      return { status: 'done' };
    });

    this.#fork = this.db.transaction((input: ForkInput): ForkResult => {
      const source = sql.headOf.get(input.sessionId) as Pick<SessionRow, 'head'> | undefined;
      if (!source) return { status: 'not_found', missing: 'session' };
      const at = input.atSeq ?? source.head;
      if (!sql.checkpointRow.get(input.sessionId, at))
        return { status: 'not_found', missing: 'seq' };
      if (sql.headOf.get(input.newId)) return { status: 'exists' };
      const rows = sql.lineageRows.all({
        id: input.sessionId,
        from: at,
        limit: Number.MAX_SAFE_INTEGER,
      }) as CheckpointRow[];
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
      const session = sql.headOf.get(sessionId) as Pick<SessionRow, 'head'> | undefined;
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
  }

  async append(input: AppendInput): Promise<AppendResult> {
    return this.#append.immediate(input);
  }

  async load(sessionId: string, seq: number | null): Promise<StoredCheckpoint | null> {
    const row = (
      seq === null ? this.#sql.loadHead.get(sessionId) : this.#sql.loadSeq.get(sessionId, seq)
    ) as LoadedRow | undefined;
    return row ? checkpointFromRow(row) : null;
  }

  async session(sessionId: string): Promise<StoredSession | null> {
    const row = this.#sql.session.get(sessionId) as SessionRow | undefined;
    return row ? sessionFromRow(row) : null;
  }

  async listCheckpoints(
    sessionId: string,
    query: { beforeSeq: number | null; limit: number },
  ): Promise<StoredCheckpointInfo[]> {
    const rows = this.#sql.listCheckpoints.all({
      id: sessionId,
      before: query.beforeSeq,
      limit: query.limit,
    }) as Omit<LoadedRow, 'data'>[];
    return rows.map(checkpointInfoFromRow);
  }

  async lineage(
    sessionId: string,
    query: { fromSeq: number | null; limit: number; transcript: boolean },
  ): Promise<StoredLineageEntry[]> {
    const statement = query.transcript ? this.#sql.lineageWithTranscript : this.#sql.lineage;
    const rows = statement.all({ id: sessionId, from: query.fromSeq, limit: query.limit }) as {
      seq: number;
      parent: number | null;
      created_at: number;
      transcript?: string;
    }[];
    return rows.map(lineageFromRow);
  }

  async rollback(input: RollbackInput): Promise<RollbackResult> {
    return this.#rollback.immediate(input);
  }

  async fork(input: ForkInput): Promise<ForkResult> {
    return this.#fork.immediate(input);
  }

  async prune(sessionId: string, keepLast: number): Promise<number> {
    return this.#prune.immediate(sessionId, keepLast);
  }

  async delete(sessionId: string): Promise<boolean> {
    return this.#delete.immediate(sessionId);
  }

  async sessions(query: {
    after: SessionPosition | null;
    limit: number;
  }): Promise<StoredSession[]> {
    const rows = (
      query.after === null
        ? this.#sql.sessionsFirst.all(query.limit)
        : this.#sql.sessionsAfter.all({
            updatedAt: query.after.updatedAt,
            id: query.after.sessionId,
            limit: query.limit,
          })
    ) as SessionRow[];
    return rows.map(sessionFromRow);
  }

  async stateGet(scope: string, key: string): Promise<string | undefined> {
    return (this.#sql.stateGet.get(scope, key) as { value: string } | undefined)?.value;
  }

  async stateSet(scope: string, key: string, value: string): Promise<void> {
    this.#sql.stateSet.run(scope, key, value);
  }

  async stateDelete(scope: string, key: string): Promise<boolean> {
    return this.#sql.stateDelete.run(scope, key).changes > 0;
  }

  async stateCompareAndSet(
    scope: string,
    key: string,
    expected: string | null,
    value: string,
  ): Promise<boolean> {
    const result =
      expected === null
        ? this.#sql.stateInsert.run(scope, key, value)
        : this.#sql.stateReplace.run(value, scope, key, expected);
    return result.changes === 1;
  }

  async stateKeys(
    scope: string,
    query: { prefix: string; after: string | null; limit: number },
  ): Promise<string[]> {
    const rows = this.#sql.stateKeys.all({
      scope,
      prefix: query.prefix,
      bound: prefixUpperBound(query.prefix),
      after: query.after,
      limit: query.limit,
    }) as { key: string }[];
    return rows.map((r) => r.key);
  }

  async close(): Promise<void> {
    if (this.db.open) this.db.close();
  }
}
