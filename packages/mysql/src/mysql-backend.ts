/**
 * The native MySQL / MariaDB backend. Each mutation is one CALL of a stored procedure (one
 * transaction); each read is one statement; each statement is one round trip once its
 * connection has prepared it (see connection.ts). Deadlocks and lock-wait timeouts,
 * after which the server has rolled the transaction back, are retried here.
 */
import {
  type AppendInput,
  type AppendResult,
  type AppendRow,
  appendResultFromRow,
  type CheckpointBackend,
  type CheckpointRow,
  checkpointFromRow,
  checkpointInfoFromRow,
  type ForkInput,
  type ForkResult,
  forkResultFromRow,
  type LineageRow,
  lineageFromRow,
  prefixUpperBound,
  procedureArgs,
  type RollbackInput,
  type RollbackResult,
  rollbackResultFromRow,
  type SessionPosition,
  type SessionRow,
  type StoredCheckpoint,
  type StoredCheckpointInfo,
  type StoredLineageEntry,
  type StoredSession,
  sessionFromRow,
} from '@ckpt/core';
import type { Pool } from 'mysql2/promise';
import {
  type Connection,
  connect,
  type MysqlOptions,
  openStatements,
  type Statements,
} from './connection.js';
import { tables } from './schema.js';

/** Ids come back from VARBINARY columns as bytes. */
const text = (value: Buffer | string): string =>
  typeof value === 'string' ? value : value.toString('utf8');

/** A session row as mysql2 returns it: ids as bytes. */
type BinarySessionRow = Omit<SessionRow, 'id' | 'forked_from_id'> & {
  id: Buffer;
  forked_from_id: Buffer | null;
};

const sessionFromBinaryRow = (row: BinarySessionRow) =>
  sessionFromRow({
    ...row,
    id: text(row.id),
    forked_from_id: row.forked_from_id === null ? null : text(row.forked_from_id),
  });

function statements(ns: string) {
  const t = tables(ns);
  const sessionColumns =
    'id, head, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at';
  return {
    append: `CALL ${ns}_append(?, ?, ?, ?, ?, ?, ?, ?)`,
    rollback: `CALL ${ns}_rollback(?, ?, ?, ?, ?)`,
    fork: `CALL ${ns}_fork(?, ?, ?, ?)`,
    prune: `CALL ${ns}_prune(?, ?)`,
    delete: `CALL ${ns}_delete(?)`,
    // A load is one SELECT, so it reads the head and its checkpoint from one snapshot. Prepared
    // once per connection, a join costs less than the CALL of the `<ns>_load` procedure that
    // earlier versions made (which stays for them).
    loadHead: `
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at, s.metadata, b.data
        FROM ${t.sessions} s JOIN ${t.bodies} b ON b.session_id = s.id AND b.seq = s.head
       WHERE s.id = ?`,
    loadSeq: `
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
        FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
       WHERE c.session_id = ? AND c.seq = ?`,
    session: `SELECT ${sessionColumns} FROM ${t.sessions} WHERE id = ?`,
    listCheckpoints: `
      SELECT seq, parent, created_at, metadata FROM ${t.checkpoints}
       WHERE session_id = ? AND (? IS NULL OR seq < ?) ORDER BY seq DESC LIMIT ?`,
    // Both servers stop a recursive query after 1,000 steps by default (MariaDB silently, with
    // a partial result), far fewer than a long session's history: each raises it for this
    // statement alone, MariaDB through its executable comment, MySQL 8 through a hint, and
    // each ignores the other's.
    lineage: `/*M! SET STATEMENT max_recursive_iterations = 4294967295 FOR */
      WITH RECURSIVE chain (seq, parent, created_at, depth) AS (
        SELECT c.seq, c.parent, c.created_at, 1 FROM ${t.checkpoints} c
         WHERE c.session_id = ? AND c.seq = COALESCE(?, (SELECT head FROM ${t.sessions} WHERE id = ?))
        UNION ALL
        SELECT c.seq, c.parent, c.created_at, chain.depth + 1
          FROM chain JOIN ${t.checkpoints} c ON c.session_id = ? AND c.seq = chain.parent
         WHERE chain.depth < ?
      )
      SELECT /*+ SET_VAR(cte_max_recursion_depth = 4294967295) */ chain.seq, chain.parent, chain.created_at,
             CASE WHEN ? THEN COALESCE((SELECT x.items FROM ${t.transcripts} x
                                         WHERE x.session_id = ? AND x.seq = chain.seq), '[]') END AS transcript
        FROM chain ORDER BY chain.depth`,
    sessionsFirst: `SELECT ${sessionColumns} FROM ${t.sessions} ORDER BY updated_at DESC, id DESC LIMIT ?`,
    sessionsAfter: `
      SELECT ${sessionColumns} FROM ${t.sessions}
       WHERE updated_at < ? OR (updated_at = ? AND id < ?)
       ORDER BY updated_at DESC, id DESC LIMIT ?`,
    stateGet: `SELECT value FROM ${t.state} WHERE scope = ? AND k = ?`,
    stateSet: `INSERT INTO ${t.state} (scope, k, value) VALUES (?, ?, ?) ON DUPLICATE KEY UPDATE value = VALUES(value)`,
    stateDelete: `DELETE FROM ${t.state} WHERE scope = ? AND k = ?`,
    stateInsert: `INSERT IGNORE INTO ${t.state} (scope, k, value) VALUES (?, ?, ?)`,
    stateReplace: `UPDATE ${t.state} SET value = ? WHERE scope = ? AND k = ? AND value = ?`,
    stateKeys: `
      SELECT k FROM ${t.state}
       WHERE scope = ? AND k >= ? AND (? IS NULL OR k < ?) AND (? IS NULL OR k > ?)
       ORDER BY k LIMIT ?`,
  };
}

/** The MySQL / MariaDB backend (see `mysql()`). */
export class MysqlBackend implements CheckpointBackend {
  readonly name = 'mysql';
  readonly capabilities = { concurrentWriters: true, listSessions: true, listStateKeys: true };
  readonly namespace: string;
  /** The promise pool queries run on. */
  readonly pool: Pool;
  readonly #connection: Connection;
  readonly #sql: ReturnType<typeof statements>;
  readonly #statements: Statements;
  #closed = false;

  constructor(options: MysqlOptions) {
    this.#connection = connect(options);
    this.pool = this.#connection.pool;
    this.namespace = this.#connection.namespace;
    this.#sql = statements(this.namespace);
    this.#statements = openStatements(
      this.pool,
      this.namespace,
      this.#connection.preparedStatements,
    );
  }

  /** Resolves once the tables are migrated; rejects (with SCHEMA or UNSUPPORTED) when they cannot be. */
  ready(): Promise<void> {
    return this.#statements.ready;
  }

  #query(sql: string, values: unknown[]): Promise<unknown> {
    return this.#statements.run(sql, values);
  }

  /** Run one statement; for a CALL, the rows of its first result set. */
  async #rows<T>(sql: string, values: unknown[]): Promise<T[]> {
    const result = await this.#query(sql, values);
    return (sql.startsWith('CALL') ? (result as unknown[])[0] : result) as T[];
  }

  async #changed(sql: string, values: unknown[]): Promise<number> {
    return ((await this.#query(sql, values)) as { affectedRows: number }).affectedRows;
  }

  async append(input: AppendInput): Promise<AppendResult> {
    const [row] = await this.#rows<AppendRow>(this.#sql.append, procedureArgs.append(input));
    return appendResultFromRow(row!);
  }

  async load(sessionId: string, seq: number | null): Promise<StoredCheckpoint | null> {
    const [row] =
      seq === null
        ? await this.#rows<CheckpointRow>(this.#sql.loadHead, [sessionId])
        : await this.#rows<CheckpointRow>(this.#sql.loadSeq, [sessionId, seq]);
    return row ? checkpointFromRow(row) : null;
  }

  async session(sessionId: string): Promise<StoredSession | null> {
    const [row] = await this.#rows<BinarySessionRow>(this.#sql.session, [sessionId]);
    return row ? sessionFromBinaryRow(row) : null;
  }

  async listCheckpoints(
    sessionId: string,
    query: { beforeSeq: number | null; limit: number },
  ): Promise<StoredCheckpointInfo[]> {
    const rows = await this.#rows<CheckpointRow>(this.#sql.listCheckpoints, [
      sessionId,
      query.beforeSeq,
      query.beforeSeq,
      query.limit,
    ]);
    return rows.map(checkpointInfoFromRow);
  }

  async lineage(
    sessionId: string,
    query: { fromSeq: number | null; limit: number; transcript: boolean },
  ): Promise<StoredLineageEntry[]> {
    const rows = await this.#rows<LineageRow>(this.#sql.lineage, [
      sessionId,
      query.fromSeq,
      sessionId,
      sessionId,
      query.limit,
      query.transcript,
      sessionId,
    ]);
    return rows.map(lineageFromRow);
  }

  async rollback(input: RollbackInput): Promise<RollbackResult> {
    const [row] = await this.#rows<{ status: string; head: number | null }>(
      this.#sql.rollback,
      procedureArgs.rollback(input),
    );
    return rollbackResultFromRow(row!);
  }

  async fork(input: ForkInput): Promise<ForkResult> {
    const [row] = await this.#rows<{ status: string; seq: number | null }>(
      this.#sql.fork,
      procedureArgs.fork(input),
    );
    return forkResultFromRow(row!);
  }

  async prune(sessionId: string, keepLast: number): Promise<number> {
    const [row] = await this.#rows<{ removed: number }>(this.#sql.prune, [sessionId, keepLast]);
    return Number(row!.removed);
  }

  async delete(sessionId: string): Promise<boolean> {
    const [row] = await this.#rows<{ deleted: number }>(this.#sql.delete, [sessionId]);
    return Number(row!.deleted) > 0;
  }

  async sessions(query: {
    after: SessionPosition | null;
    limit: number;
  }): Promise<StoredSession[]> {
    const { after } = query;
    const rows =
      after === null
        ? await this.#rows<BinarySessionRow>(this.#sql.sessionsFirst, [query.limit])
        : await this.#rows<BinarySessionRow>(this.#sql.sessionsAfter, [
            after.updatedAt,
            after.updatedAt,
            after.sessionId,
            query.limit,
          ]);
    return rows.map(sessionFromBinaryRow);
  }

  async stateGet(scope: string, key: string): Promise<string | undefined> {
    const [row] = await this.#rows<{ value: string }>(this.#sql.stateGet, [scope, key]);
    return row?.value;
  }

  async stateSet(scope: string, key: string, value: string): Promise<void> {
    await this.#changed(this.#sql.stateSet, [scope, key, value]);
  }

  async stateDelete(scope: string, key: string): Promise<boolean> {
    return (await this.#changed(this.#sql.stateDelete, [scope, key])) > 0;
  }

  async stateCompareAndSet(
    scope: string,
    key: string,
    expected: string | null,
    value: string,
  ): Promise<boolean> {
    const changed =
      expected === null
        ? await this.#changed(this.#sql.stateInsert, [scope, key, value])
        : await this.#changed(this.#sql.stateReplace, [value, scope, key, expected]);
    return changed === 1;
  }

  async stateKeys(
    scope: string,
    query: { prefix: string; after: string | null; limit: number },
  ): Promise<string[]> {
    const bound = prefixUpperBound(query.prefix);
    const rows = await this.#rows<{ k: Buffer }>(this.#sql.stateKeys, [
      scope,
      query.prefix,
      bound,
      bound,
      query.after,
      query.after,
      query.limit,
    ]);
    return rows.map((r) => text(r.k));
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#statements.ready.catch(() => {});
    if (this.#connection.owned) await this.pool.end();
  }
}
