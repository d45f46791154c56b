/**
 * The native SQLite backend. better-sqlite3 is synchronous, so each method runs its
 * statements in one transaction without yielding; writes use BEGIN IMMEDIATE, so a writer
 * takes the database's write lock before it reads what it will change, and several processes
 * on one file serialise their writes instead of deadlocking.
 */
import type {
  AppendInput,
  AppendResult,
  CheckpointBackend,
  ForkInput,
  ForkResult,
  RollbackInput,
  RollbackResult,
  SessionPosition,
  StoredCheckpoint,
  StoredCheckpointInfo,
  StoredLineageEntry,
  StoredSession,
} from '@ckpt/core';
import { prefixUpperBound } from '@ckpt/core';
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
  data: string;
}

// The statements, in one place, readable on their own. `T` is the table names.
function statements(db: Database.Database, t: ReturnType<typeof tables>) {
  const chain = (withTranscript: boolean) => `
    WITH RECURSIVE chain (seq, parent, created_at, depth) AS (
      SELECT seq, parent, created_at, 1 FROM ${t.checkpoints}
       WHERE session_id = :id
         AND seq = coalesce(:from, (SELECT head FROM ${t.sessions} WHERE id = :id))
      UNION ALL
      SELECT c.seq, c.parent, c.created_at, chain.depth + 1
        FROM chain JOIN ${t.checkpoints} c ON c.session_id = :id AND c.seq = chain.parent
       WHERE chain.depth < :limit
    )
    SELECT chain.seq, chain.parent, chain.created_at${withTranscript ? ", coalesce(t.items, '[]') AS transcript" : ''}
      FROM chain${withTranscript ? ` LEFT JOIN ${t.transcripts} t ON t.session_id = :id AND t.seq = chain.seq` : ''}
     ORDER BY chain.depth`;
  const checkpointColumns = 'c.seq, c.parent, c.created_at, c.metadata, p.data';
  return {
    session: db.prepare(`SELECT * FROM ${t.sessions} WHERE id = ?`),
    headOf: db.prepare(`SELECT head, last_seq FROM ${t.sessions} WHERE id = ?`),
    idempotent: db.prepare(`SELECT seq FROM ${t.idempotency} WHERE session_id = ? AND key = ?`),
    insertCheckpoint: db.prepare(
      `INSERT INTO ${t.checkpoints} (session_id, seq, parent, created_at, metadata) VALUES (?, ?, ?, ?, ?)`,
    ),
    insertPayload: db.prepare(`INSERT INTO ${t.payloads} (session_id, seq, data) VALUES (?, ?, ?)`),
    insertTranscript: db.prepare(
      `INSERT INTO ${t.transcripts} (session_id, seq, items) VALUES (?, ?, ?)`,
    ),
    upsertSession: db.prepare(`
      INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, metadata, created_at, updated_at)
      VALUES (:id, :seq, :seq, 1, :metadata, :now, :now)
      ON CONFLICT (id) DO UPDATE SET head = :seq, last_seq = :seq, checkpoints = checkpoints + 1,
                                     metadata = :metadata, updated_at = :now`),
    insertIdempotency: db.prepare(
      `INSERT INTO ${t.idempotency} (session_id, key, seq) VALUES (?, ?, ?)`,
    ),
    loadHead: db.prepare(`
      SELECT ${checkpointColumns}
        FROM ${t.sessions} s
        JOIN ${t.checkpoints} c ON c.session_id = s.id AND c.seq = s.head
        JOIN ${t.payloads} p ON p.session_id = s.id AND p.seq = s.head
       WHERE s.id = ?`),
    loadSeq: db.prepare(`
      SELECT ${checkpointColumns}
        FROM ${t.checkpoints} c JOIN ${t.payloads} p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE c.session_id = ? AND c.seq = ?`),
    checkpointMetadata: db.prepare(
      `SELECT metadata FROM ${t.checkpoints} WHERE session_id = ? AND seq = ?`,
    ),
    listCheckpoints: db.prepare(`
      SELECT seq, parent, created_at, metadata FROM ${t.checkpoints}
       WHERE session_id = :id AND seq < coalesce(:before, 9007199254740992)
       ORDER BY seq DESC LIMIT :limit`),
    lineage: db.prepare(chain(false)),
    lineageWithTranscript: db.prepare(chain(true)),
    moveHead: db.prepare(
      `UPDATE ${t.sessions} SET head = ?, metadata = ?, updated_at = ? WHERE id = ?`,
    ),
    copyCheckpoints: db.prepare(`
      INSERT INTO ${t.checkpoints} (session_id, seq, parent, created_at, metadata)
      SELECT :newId, c.seq, c.parent, c.created_at, c.metadata
        FROM (${chain(false).replace(':from', ':at')}) chain
        JOIN ${t.checkpoints} c ON c.session_id = :id AND c.seq = chain.seq`),
    copyPayloads: db.prepare(`
      INSERT INTO ${t.payloads} (session_id, seq, data)
      SELECT :newId, p.seq, p.data
        FROM ${t.checkpoints} c JOIN ${t.payloads} p ON p.session_id = :id AND p.seq = c.seq
       WHERE c.session_id = :newId`),
    copyTranscripts: db.prepare(`
      INSERT INTO ${t.transcripts} (session_id, seq, items)
      SELECT :newId, x.seq, x.items
        FROM ${t.checkpoints} c JOIN ${t.transcripts} x ON x.session_id = :id AND x.seq = c.seq
       WHERE c.session_id = :newId`),
    insertFork: db.prepare(`
      INSERT INTO ${t.sessions}
        (id, head, last_seq, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at)
      VALUES (:newId, :at, :at, :count, :id, :at, :metadata, :now, :now)`),
    pruneThreshold: db.prepare(
      `SELECT seq FROM ${t.checkpoints} WHERE session_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?`,
    ),
    pruneCheckpoints: db.prepare(
      `DELETE FROM ${t.checkpoints} WHERE session_id = :id AND seq < :below AND seq <> :head`,
    ),
    prunePayloads: db.prepare(
      `DELETE FROM ${t.payloads} WHERE session_id = :id AND seq < :below AND seq <> :head`,
    ),
    pruneTranscripts: db.prepare(
      `DELETE FROM ${t.transcripts} WHERE session_id = :id AND seq < :below AND seq <> :head`,
    ),
    countDown: db.prepare(`UPDATE ${t.sessions} SET checkpoints = checkpoints - ? WHERE id = ?`),
    deleteCheckpoints: db.prepare(`DELETE FROM ${t.checkpoints} WHERE session_id = ?`),
    deletePayloads: db.prepare(`DELETE FROM ${t.payloads} WHERE session_id = ?`),
    deleteTranscripts: db.prepare(`DELETE FROM ${t.transcripts} WHERE session_id = ?`),
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

function toSession(row: SessionRow): StoredSession {
  return {
    sessionId: row.id,
    head: row.head,
    checkpoints: row.checkpoints,
    forkedFrom:
      row.forked_from_id === null
        ? null
        : { sessionId: row.forked_from_id, seq: row.forked_from_seq as number },
    metadata: row.metadata,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

function toCheckpoint(row: CheckpointRow): StoredCheckpoint {
  return {
    seq: row.seq,
    parent: row.parent,
    data: row.data,
    metadata: row.metadata,
    createdAt: row.created_at,
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

  constructor(options: SqliteOptions) {
    const opened = openDatabase(options, 'checkpoints_schema_version', checkpointMigrations);
    this.db = opened.db;
    this.namespace = opened.namespace;
    this.synchronous = opened.synchronous;
    this.#sql = statements(this.db, tables(this.namespace));
  }

  /** Run `fn` in a BEGIN IMMEDIATE transaction. */
  #write<T>(fn: () => T): T {
    return this.db.transaction(fn).immediate();
  }

  async append(input: AppendInput): Promise<AppendResult> {
    const sql = this.#sql;
    return this.#write((): AppendResult => {
      const id = input.sessionId;
      const session = sql.headOf.get(id) as Pick<SessionRow, 'head' | 'last_seq'> | undefined;
      if (session && input.idempotencyKey !== undefined) {
        const seen = sql.idempotent.get(id, input.idempotencyKey) as { seq: number } | undefined;
        if (seen) {
          const row = sql.loadSeq.get(id, seen.seq) as CheckpointRow | undefined;
          return { status: 'replayed', seq: seen.seq, checkpoint: row ? toCheckpoint(row) : null };
        }
      }
      const head = session?.head ?? null;
      if (input.expectedHead !== undefined && input.expectedHead !== head) {
        return { status: 'conflict', head };
      }
      const seq = (session?.last_seq ?? 0) + 1;
      sql.insertCheckpoint.run(id, seq, head, input.now, input.metadata);
      sql.insertPayload.run(id, seq, input.data);
      if (input.transcript !== '[]') sql.insertTranscript.run(id, seq, input.transcript);
      sql.upsertSession.run({ id, seq, metadata: input.metadata, now: input.now });
      if (input.idempotencyKey !== undefined)
        sql.insertIdempotency.run(id, input.idempotencyKey, seq);
      return { status: 'written', seq, parent: head };
    });
  }

  async load(sessionId: string, seq: number | null): Promise<StoredCheckpoint | null> {
    const row = (
      seq === null ? this.#sql.loadHead.get(sessionId) : this.#sql.loadSeq.get(sessionId, seq)
    ) as CheckpointRow | undefined;
    return row ? toCheckpoint(row) : null;
  }

  async session(sessionId: string): Promise<StoredSession | null> {
    const row = this.#sql.session.get(sessionId) as SessionRow | undefined;
    return row ? toSession(row) : null;
  }

  async listCheckpoints(
    sessionId: string,
    query: { beforeSeq: number | null; limit: number },
  ): Promise<StoredCheckpointInfo[]> {
    const rows = this.#sql.listCheckpoints.all({
      id: sessionId,
      before: query.beforeSeq,
      limit: query.limit,
    }) as Omit<CheckpointRow, 'data'>[];
    return rows.map((r) => ({
      seq: r.seq,
      parent: r.parent,
      metadata: r.metadata,
      createdAt: r.created_at,
    }));
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
    return rows.map((r) => ({
      seq: r.seq,
      parent: r.parent,
      createdAt: r.created_at,
      ...(r.transcript === undefined ? {} : { transcript: r.transcript }),
    }));
  }

  async rollback(input: RollbackInput): Promise<RollbackResult> {
    const sql = this.#sql;
    return this.#write((): RollbackResult => {
      const session = sql.session.get(input.sessionId) as SessionRow | undefined;
      if (!session) return { status: 'not_found', missing: 'session' };
      if (input.expectedHead !== undefined && input.expectedHead !== session.head) {
        return { status: 'conflict', head: session.head };
      }
      const target = sql.checkpointMetadata.get(input.sessionId, input.seq) as
        | { metadata: string }
        | undefined;
      if (!target) return { status: 'not_found', missing: 'seq' };
      sql.moveHead.run(input.seq, target.metadata, input.now, input.sessionId);
      return { status: 'done' };
    });
  }

  async fork(input: ForkInput): Promise<ForkResult> {
    const sql = this.#sql;
    return this.#write((): ForkResult => {
      const source = sql.session.get(input.sessionId) as SessionRow | undefined;
      if (!source) return { status: 'not_found', missing: 'session' };
      const at = input.atSeq ?? source.head;
      const target = sql.checkpointMetadata.get(input.sessionId, at) as
        | { metadata: string }
        | undefined;
      if (!target) return { status: 'not_found', missing: 'seq' };
      if (sql.session.get(input.newId)) return { status: 'exists' };
      const ids = { id: input.sessionId, newId: input.newId };
      const copied = sql.copyCheckpoints.run({
        ...ids,
        at,
        limit: Number.MAX_SAFE_INTEGER,
      }).changes;
      sql.copyPayloads.run(ids);
      sql.copyTranscripts.run(ids);
      sql.insertFork.run({ ...ids, at, count: copied, metadata: target.metadata, now: input.now });
      return { status: 'done', seq: at };
    });
  }

  async prune(sessionId: string, keepLast: number): Promise<number> {
    const sql = this.#sql;
    return this.#write(() => {
      const session = sql.session.get(sessionId) as SessionRow | undefined;
      if (!session) return 0;
      // The keepLast-th highest seq: everything below it goes, except the head.
      const lowestKept = sql.pruneThreshold.get(sessionId, keepLast - 1) as
        | { seq: number }
        | undefined;
      if (!lowestKept) return 0;
      const range = { id: sessionId, below: lowestKept.seq, head: session.head };
      const removed = sql.pruneCheckpoints.run(range).changes;
      sql.prunePayloads.run(range);
      sql.pruneTranscripts.run(range);
      if (removed > 0) sql.countDown.run(removed, sessionId);
      return removed;
    });
  }

  async delete(sessionId: string): Promise<boolean> {
    const sql = this.#sql;
    return this.#write(() => {
      sql.deleteCheckpoints.run(sessionId);
      sql.deletePayloads.run(sessionId);
      sql.deleteTranscripts.run(sessionId);
      sql.deleteIdempotency.run(sessionId);
      return sql.deleteSession.run(sessionId).changes > 0;
    });
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
    return rows.map(toSession);
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
