/**
 * The native backend of a SQL server on which every operation is one statement (a mutation is
 * one call of a procedure or function its migrations created): PostgreSQL and MySQL. What each
 * operation sends and how its rows become the backend contract's types is written once here;
 * an adapter supplies its statements and how to run one.
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
} from './backend.js';
import { prefixUpperBound } from './order.js';
import {
  type AppendRow,
  appendResultFromRow,
  type CheckpointRow,
  checkpointFromRow,
  checkpointInfoFromRow,
  forkResultFromRow,
  type LineageRow,
  lineageFromRow,
  procedureArgs,
  rollbackResultFromRow,
  type SessionRow,
  sessionFromRow,
} from './sql-rows.js';

/**
 * A SQL backend's statements, by name. Each is given the values listed, in that order, and
 * takes them by number (`$1` is the first), each as often as its SQL needs.
 */
export interface SqlStatements<Statement> {
  /** sessionId, data, metadata, transcript, checkExpectedHead, expectedHead, idempotencyKey, now */
  append: Statement;
  /** sessionId, seq, checkExpectedHead, expectedHead, now */
  rollback: Statement;
  /** sessionId, atSeq, newId, now */
  fork: Statement;
  /** sessionId, keepLast; one row: `removed` */
  prune: Statement;
  /** sessionId; one row: `deleted` (true or a count above 0 when there was a session) */
  delete: Statement;
  /** sessionId; the head's row: seq, parent, created_at, metadata, data */
  loadHead: Statement;
  /** sessionId, seq; as loadHead */
  loadSeq: Statement;
  /** sessionId; the session's row */
  session: Statement;
  /** sessionId, beforeSeq (null: all), limit; rows without data, seq descending */
  listCheckpoints: Statement;
  /** sessionId, fromSeq (null: the head), limit, withTranscript; rows newest first */
  lineage: Statement;
  /** limit; session rows, updated_at then id descending */
  sessionsFirst: Statement;
  /** updatedAt, sessionId (the last session of the page before), limit; as sessionsFirst */
  sessionsAfter: Statement;
  /** scope, key; one row: `value`, or none */
  stateGet: Statement;
  /** scope, key, value */
  stateSet: Statement;
  /** scope, key */
  stateDelete: Statement;
  /** scope, key, value: written only where the key is absent */
  stateInsert: Statement;
  /** scope, key, expected, value: written only where the value is `expected` */
  stateReplace: Statement;
  /** scope, prefix, upperBound (null: none), after (null: none), limit; rows: `key`, ascending */
  stateKeys: Statement;
}

/** The name of one of a SQL backend's statements. */
export type SqlStatementName = keyof SqlStatements<unknown>;

/** What running a statement gave: its rows (ids as text), and how many rows it changed. */
export interface SqlResult<Row = Record<string, unknown>> {
  rows: Row[];
  changed: number;
}

/** A SQL backend: every operation of the contract, as one statement that `run` sends. */
export abstract class SqlBackend implements CheckpointBackend {
  abstract readonly name: string;
  readonly capabilities = { concurrentWriters: true, listSessions: true, listStateKeys: true };

  /** Run statement `name` with `values` (in the order `SqlStatements` lists). */
  protected abstract run<Row>(name: SqlStatementName, values: unknown[]): Promise<SqlResult<Row>>;

  abstract close(): Promise<void>;

  async append(input: AppendInput): Promise<AppendResult> {
    const { rows } = await this.run<AppendRow>('append', procedureArgs.append(input));
    return appendResultFromRow(rows[0]!);
  }

  async load(sessionId: string, seq: number | null): Promise<StoredCheckpoint | null> {
    const { rows } =
      seq === null
        ? await this.run<CheckpointRow>('loadHead', [sessionId])
        : await this.run<CheckpointRow>('loadSeq', [sessionId, seq]);
    return rows[0] ? checkpointFromRow(rows[0]) : null;
  }

  async session(sessionId: string): Promise<StoredSession | null> {
    const { rows } = await this.run<SessionRow>('session', [sessionId]);
    return rows[0] ? sessionFromRow(rows[0]) : null;
  }

  async listCheckpoints(
    sessionId: string,
    query: { beforeSeq: number | null; limit: number },
  ): Promise<StoredCheckpointInfo[]> {
    const { rows } = await this.run<CheckpointRow>('listCheckpoints', [
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
    const { rows } = await this.run<LineageRow>('lineage', [
      sessionId,
      query.fromSeq,
      query.limit,
      query.transcript,
    ]);
    return rows.map(lineageFromRow);
  }

  async rollback(input: RollbackInput): Promise<RollbackResult> {
    const { rows } = await this.run<{ status: string; head: number | null }>(
      'rollback',
      procedureArgs.rollback(input),
    );
    return rollbackResultFromRow(rows[0]!);
  }

  async fork(input: ForkInput): Promise<ForkResult> {
    const { rows } = await this.run<{ status: string; seq: number | null }>(
      'fork',
      procedureArgs.fork(input),
    );
    return forkResultFromRow(rows[0]!);
  }

  async prune(sessionId: string, keepLast: number): Promise<number> {
    const { rows } = await this.run<{ removed: number | string }>('prune', [sessionId, keepLast]);
    return Number(rows[0]!.removed);
  }

  async delete(sessionId: string): Promise<boolean> {
    // A boolean on PostgreSQL, a count on MySQL.
    const { rows } = await this.run<{ deleted: boolean | number }>('delete', [sessionId]);
    return Number(rows[0]!.deleted) > 0;
  }

  async sessions(query: {
    after: SessionPosition | null;
    limit: number;
  }): Promise<StoredSession[]> {
    const { after, limit } = query;
    const { rows } =
      after === null
        ? await this.run<SessionRow>('sessionsFirst', [limit])
        : await this.run<SessionRow>('sessionsAfter', [after.updatedAt, after.sessionId, limit]);
    return rows.map(sessionFromRow);
  }

  async stateGet(scope: string, key: string): Promise<string | undefined> {
    const { rows } = await this.run<{ value: string }>('stateGet', [scope, key]);
    return rows[0]?.value;
  }

  async stateSet(scope: string, key: string, value: string): Promise<void> {
    await this.run('stateSet', [scope, key, value]);
  }

  async stateDelete(scope: string, key: string): Promise<boolean> {
    return (await this.run('stateDelete', [scope, key])).changed > 0;
  }

  async stateCompareAndSet(
    scope: string,
    key: string,
    expected: string | null,
    value: string,
  ): Promise<boolean> {
    const result =
      expected === null
        ? await this.run('stateInsert', [scope, key, value])
        : await this.run('stateReplace', [scope, key, expected, value]);
    return result.changed === 1;
  }

  async stateKeys(
    scope: string,
    query: { prefix: string; after: string | null; limit: number },
  ): Promise<string[]> {
    const { prefix, after, limit } = query;
    const { rows } = await this.run<{ key: string }>('stateKeys', [
      scope,
      prefix,
      prefixUpperBound(prefix),
      after,
      limit,
    ]);
    return rows.map((row) => row.key);
  }
}
