/**
 * The native PostgreSQL backend. Each mutation is one call of a function the migration
 * created (one round trip, one transaction); each read is one statement. Nothing depends on
 * session state between statements, so any pool or PgBouncer in transaction mode works.
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
import type pg from 'pg';
import {
  type Connection,
  connect,
  migrate,
  type PostgresOptions,
  prepared,
  type Statement,
  statementRunner,
} from './connection.js';
import { schemaIdentifier } from './schema.js';

// Every statement, in one place and readable on its own. `$n` are parameters. The pages
// that take optional bounds are parsed on each call, so that each is planned for its values;
// every other statement is prepared once per connection.
function statements(namespace: string) {
  const ns = schemaIdentifier(namespace);
  const sessionColumns =
    'id, head, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at';
  return {
    append: prepared(`SELECT * FROM ${ns}.append($1, $2, $3, $4, $5, $6, $7, $8)`),
    rollback: prepared(`SELECT * FROM ${ns}.rollback($1, $2, $3, $4, $5)`),
    fork: prepared(`SELECT * FROM ${ns}.fork($1, $2, $3, $4)`),
    prune: prepared(`SELECT ${ns}.prune($1, $2) AS removed`),
    delete: prepared(`SELECT ${ns}.delete_session($1) AS deleted`),
    // A load is one SELECT, so it reads the head and its checkpoint from one snapshot. Prepared,
    // a join costs less than a call of the `load` function earlier versions made (which stays
    // for them): the function hands its rows back through a buffer of its own.
    loadHead: prepared(`
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at, s.metadata, b.data
        FROM ${ns}.sessions s JOIN ${ns}.bodies b ON b.session_id = s.id AND b.seq = s.head
       WHERE s.id = $1`),
    loadSeq: prepared(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
        FROM ${ns}.checkpoints c JOIN ${ns}.bodies b ON b.session_id = c.session_id AND b.seq = c.seq
       WHERE c.session_id = $1 AND c.seq = $2`),
    session: prepared(`SELECT ${sessionColumns} FROM ${ns}.sessions WHERE id = $1`),
    listCheckpoints: `
      SELECT seq, parent, created_at, metadata FROM ${ns}.checkpoints
       WHERE session_id = $1 AND ($2::bigint IS NULL OR seq < $2)
       ORDER BY seq DESC LIMIT $3`,
    lineage: prepared(`SELECT * FROM ${ns}.lineage($1, $2, $3, $4)`),
    sessionsFirst: prepared(
      `SELECT ${sessionColumns} FROM ${ns}.sessions ORDER BY updated_at DESC, id DESC LIMIT $1`,
    ),
    sessionsAfter: `
      SELECT ${sessionColumns} FROM ${ns}.sessions WHERE (updated_at, id) < ($1, $2)
       ORDER BY updated_at DESC, id DESC LIMIT $3`,
    stateGet: prepared(`SELECT value FROM ${ns}.state WHERE scope = $1 AND key = $2`),
    stateSet: prepared(`
      INSERT INTO ${ns}.state (scope, key, value) VALUES ($1, $2, $3)
      ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value`),
    stateDelete: prepared(`DELETE FROM ${ns}.state WHERE scope = $1 AND key = $2`),
    stateInsert: prepared(
      `INSERT INTO ${ns}.state (scope, key, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    ),
    stateReplace: prepared(
      `UPDATE ${ns}.state SET value = $4 WHERE scope = $1 AND key = $2 AND value = $3`,
    ),
    stateKeys: `
      SELECT key FROM ${ns}.state
       WHERE scope = $1 AND key >= $2 AND ($3::text IS NULL OR key < $3) AND ($4::text IS NULL OR key > $4)
       ORDER BY key LIMIT $5`,
  };
}

/** The PostgreSQL backend (see `postgres()`). */
export class PostgresBackend implements CheckpointBackend {
  readonly name = 'postgres';
  readonly capabilities = { concurrentWriters: true, listSessions: true, listStateKeys: true };
  readonly namespace: string;
  /** The pool queries run on. */
  readonly pool: pg.Pool;
  readonly #connection: Connection;
  readonly #sql: ReturnType<typeof statements>;
  readonly #ready: Promise<void>;
  readonly #run: ReturnType<typeof statementRunner>;

  constructor(options: PostgresOptions) {
    this.#connection = connect(options);
    this.pool = this.#connection.pool;
    this.namespace = this.#connection.namespace;
    this.#sql = statements(this.namespace);
    this.#run = statementRunner(this.pool, this.#connection.preparedStatements);
    this.#ready = migrate(this.pool, this.namespace);
    // Reported by the first call that awaits it, not as an unhandled rejection.
    this.#ready.catch(() => {});
  }

  /** Resolves once the schema is migrated; rejects (with SCHEMA) when it cannot be. */
  ready(): Promise<void> {
    return this.#ready;
  }

  async #query(statement: Statement | string, values: unknown[]): Promise<pg.QueryResult> {
    await this.#ready;
    return this.#run(statement, values);
  }

  async #rows<T>(statement: Statement | string, values: unknown[]): Promise<T[]> {
    return (await this.#query(statement, values)).rows as T[];
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
    const [row] = await this.#rows<SessionRow>(this.#sql.session, [sessionId]);
    return row ? sessionFromRow(row) : null;
  }

  async listCheckpoints(
    sessionId: string,
    query: { beforeSeq: number | null; limit: number },
  ): Promise<StoredCheckpointInfo[]> {
    const rows = await this.#rows<CheckpointRow>(this.#sql.listCheckpoints, [
      sessionId,
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
      query.limit,
      query.transcript,
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
    return row!.removed;
  }

  async delete(sessionId: string): Promise<boolean> {
    const [row] = await this.#rows<{ deleted: boolean }>(this.#sql.delete, [sessionId]);
    return row!.deleted;
  }

  async sessions(query: {
    after: SessionPosition | null;
    limit: number;
  }): Promise<StoredSession[]> {
    const rows =
      query.after === null
        ? await this.#rows<SessionRow>(this.#sql.sessionsFirst, [query.limit])
        : await this.#rows<SessionRow>(this.#sql.sessionsAfter, [
            query.after.updatedAt,
            query.after.sessionId,
            query.limit,
          ]);
    return rows.map(sessionFromRow);
  }

  async stateGet(scope: string, key: string): Promise<string | undefined> {
    const [row] = await this.#rows<{ value: string }>(this.#sql.stateGet, [scope, key]);
    return row?.value;
  }

  async stateSet(scope: string, key: string, value: string): Promise<void> {
    await this.#rows(this.#sql.stateSet, [scope, key, value]);
  }

  async stateDelete(scope: string, key: string): Promise<boolean> {
    const result = await this.#query(this.#sql.stateDelete, [scope, key]);
    return (result.rowCount ?? 0) > 0;
  }

  async stateCompareAndSet(
    scope: string,
    key: string,
    expected: string | null,
    value: string,
  ): Promise<boolean> {
    const result =
      expected === null
        ? await this.#query(this.#sql.stateInsert, [scope, key, value])
        : await this.#query(this.#sql.stateReplace, [scope, key, expected, value]);
    return result.rowCount === 1;
  }

  async stateKeys(
    scope: string,
    query: { prefix: string; after: string | null; limit: number },
  ): Promise<string[]> {
    const rows = await this.#rows<{ key: string }>(this.#sql.stateKeys, [
      scope,
      query.prefix,
      prefixUpperBound(query.prefix),
      query.after,
      query.limit,
    ]);
    return rows.map((r) => r.key);
  }

  async close(): Promise<void> {
    await this.#ready.catch(() => {});
    if (this.#connection.owned && !this.pool.ended) await this.pool.end();
  }
}
