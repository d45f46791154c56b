/**
 * The native backend of a SQL database, written once for SQLite, PostgreSQL and MySQL: what
 * each read sends and how its rows become the backend contract's types, and the state methods
 * on the state table. An adapter supplies its statements and how to run one. Where every
 * mutation is one call of a procedure or function its migrations created (PostgreSQL, MySQL),
 * `SqlProcedureBackend` makes those calls as well.
 */
import type {
  AppendInput,
  AppendResult,
  CheckpointBackend,
  ExportedStoredCheckpoint,
  ForkInput,
  ForkResult,
  ImportInput,
  RollbackInput,
  RollbackResult,
  SessionPosition,
  StoredCheckpoint,
  StoredCheckpointInfo,
  StoredLineageEntry,
  StoredSession,
} from '../adapter/backend.js';
import { sessionIdPrefixBound } from '../adapter/order.js';
import { type BatchPool, BusyPoolBatches } from './busy-pool-batches.js';
import { type KeyValueStatements, KeyValueTable } from './key-value-table.js';
import {
  type AppendRow,
  appendResultFromRow,
  type CheckpointRow,
  checkpointFromRow,
  checkpointInfoFromRow,
  forkResultFromRow,
  type LineageRow,
  lineageFromRow,
  needsFromColumn,
  rollbackResultFromRow,
  type SessionRow,
  sessionFromRow,
} from './rows.js';
import type { SqlResult } from './run.js';

/**
 * A SQL backend's reads, by name. Each is given the values listed, in that order, and takes
 * them by number (`$1` is the first), each as often as its SQL needs.
 */
export interface SqlReads<S> {
  /** sessionId; the head's row: seq, parent, created_at, metadata, data */
  loadHead: S;
  /** sessionId, seq; as loadHead */
  loadSeq: S;
  /** sessionId, idempotencyKey; as loadHead, for the checkpoint appended with that key */
  loadByKey: S;
  /** sessionId; the session's row */
  session: S;
  /** sessionId, beforeSeq (null: all), limit; rows without data, seq descending */
  listCheckpoints: S;
  /** sessionId, fromSeq (null: the head), limit, withTranscript; rows newest first */
  lineage: S;
  /** limit; session rows, updated_at then id descending */
  sessionsFirst: S;
  /** updatedAt, sessionId (the last session of the page before), limit; as sessionsFirst */
  sessionsAfter: S;
  /**
   * prefix, bound, limit; as sessionsFirst, of the sessions with `prefix <= id < bound` (the
   * ids that start with the prefix: see sessionIdPrefixBound), found by a range of the index
   * on ids
   */
  prefixSessionsFirst: S;
  /** prefix, bound, updatedAt, sessionId, limit; as prefixSessionsFirst, after that session */
  prefixSessionsAfter: S;
  /**
   * sessionId, afterSeq (null: from the first), limit; whole checkpoints, seq ascending: seq,
   * parent, created_at, metadata, data, transcript (`[]` when none), needs (JSON text of an
   * array of the seqs it needs; null or `[]` when none)
   */
  exportCheckpoints: S;
  /** after (null: from the first), limit; `scope` of each scope with a state key, ascending */
  stateScopes: S;
}

/** The statements a `SqlBackend` runs: its reads, and those of its state table (keyed by scope and key). */
export interface SqlBackendStatements<S> {
  reads: SqlReads<S>;
  state: KeyValueStatements<S>;
}

/**
 * A SQL backend's reads and state, one statement each, which `execute` sends. The mutations
 * are the adapter's own: a transaction in its driver, or a procedure (`SqlProcedureBackend`).
 */
export abstract class SqlBackend<S> implements CheckpointBackend {
  abstract readonly name: string;
  readonly capabilities = { concurrentWriters: true, listSessions: true, listStateKeys: true };
  readonly #reads: SqlReads<S>;
  readonly #state: KeyValueTable<S>;

  constructor(statements: SqlBackendStatements<S>) {
    this.#reads = statements.reads;
    this.#state = new KeyValueTable(statements.state, <Row>(statement: S, values: unknown[]) =>
      this.send<Row>(statement, values),
    );
  }

  /** Run `statement` with `values` (`$1` is the first) in one round trip. */
  protected abstract execute<Row = Record<string, unknown>>(
    statement: S,
    values: unknown[],
  ): Promise<SqlResult<Row>>;

  /** Statements started through `send` and not yet finished. */
  #inFlight = 0;

  /**
   * How many statements this backend has started and not yet finished: the connections it keeps
   * busy, counted from the moment each starts, before the driver's pool sees it.
   */
  protected get statementsInFlight(): number {
    return this.#inFlight;
  }

  /** `execute`, counted in statementsInFlight. Every statement of the family goes through it. */
  protected async send<Row>(statement: S, values: unknown[]): Promise<SqlResult<Row>> {
    this.#inFlight++;
    try {
      return await this.execute<Row>(statement, values);
    } finally {
      this.#inFlight--;
    }
  }

  /**
   * The first row of a reading `statement`, or undefined. By default `execute`'s first row; a
   * driver that can fetch one row without a list of them (better-sqlite3's `get`) overrides it,
   * for the single-row reads (load, session) that an agent makes at every step.
   */
  protected async first<Row>(statement: S, values: unknown[]): Promise<Row | undefined> {
    return (await this.send<Row>(statement, values)).rows[0];
  }

  abstract append(input: AppendInput): Promise<AppendResult>;
  abstract rollback(input: RollbackInput): Promise<RollbackResult>;
  abstract fork(input: ForkInput): Promise<ForkResult>;
  abstract prune(sessionId: string, keepLast: number): Promise<number>;
  abstract delete(sessionId: string): Promise<boolean>;
  abstract close(): Promise<void>;

  async load(sessionId: string, seq: number | null): Promise<StoredCheckpoint | null> {
    const row =
      seq === null
        ? await this.first<CheckpointRow>(this.#reads.loadHead, [sessionId])
        : await this.first<CheckpointRow>(this.#reads.loadSeq, [sessionId, seq]);
    return row ? checkpointFromRow(row) : null;
  }

  async loadByKey(sessionId: string, idempotencyKey: string): Promise<StoredCheckpoint | null> {
    const row = await this.first<CheckpointRow>(this.#reads.loadByKey, [sessionId, idempotencyKey]);
    return row ? checkpointFromRow(row) : null;
  }

  async session(sessionId: string): Promise<StoredSession | null> {
    const row = await this.first<SessionRow>(this.#reads.session, [sessionId]);
    return row ? sessionFromRow(row) : null;
  }

  async listCheckpoints(
    sessionId: string,
    query: { beforeSeq: number | null; limit: number },
  ): Promise<StoredCheckpointInfo[]> {
    const { rows } = await this.send<CheckpointRow>(this.#reads.listCheckpoints, [
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
    const { rows } = await this.send<LineageRow>(this.#reads.lineage, [
      sessionId,
      query.fromSeq,
      query.limit,
      query.transcript,
    ]);
    return rows.map(lineageFromRow);
  }

  async sessions(query: {
    after: SessionPosition | null;
    limit: number;
    prefix: string;
  }): Promise<StoredSession[]> {
    const { after, limit, prefix } = query;
    const reads = this.#reads;
    const range = prefix === '' ? [] : [prefix, sessionIdPrefixBound(prefix)];
    const position = after === null ? [] : [after.updatedAt, after.sessionId];
    const statement =
      prefix === ''
        ? after === null
          ? reads.sessionsFirst
          : reads.sessionsAfter
        : after === null
          ? reads.prefixSessionsFirst
          : reads.prefixSessionsAfter;
    const { rows } = await this.send<SessionRow>(statement, [...range, ...position, limit]);
    return rows.map(sessionFromRow);
  }

  async exportCheckpoints(
    sessionId: string,
    query: { afterSeq: number | null; limit: number },
  ): Promise<ExportedStoredCheckpoint[]> {
    const { rows } = await this.send<CheckpointRow & { transcript: string; needs: string | null }>(
      this.#reads.exportCheckpoints,
      [sessionId, query.afterSeq, query.limit],
    );
    return rows.map((row) => ({
      ...checkpointFromRow(row),
      transcript: row.transcript,
      needs: needsFromColumn(row.needs),
    }));
  }

  abstract importSession(input: ImportInput): Promise<'imported' | 'exists'>;

  async stateScopes(query: { after: string | null; limit: number }): Promise<string[]> {
    const { rows } = await this.send<{ scope: string }>(this.#reads.stateScopes, [
      query.after,
      query.limit,
    ]);
    return rows.map((row) => row.scope);
  }

  stateGet(scope: string, key: string): Promise<string | undefined> {
    return this.#state.get([scope, key]);
  }

  stateSet(scope: string, key: string, value: string): Promise<void> {
    return this.#state.set([scope, key], value);
  }

  stateDelete(scope: string, key: string): Promise<boolean> {
    return this.#state.delete([scope, key]);
  }

  stateCompareAndSet(
    scope: string,
    key: string,
    expected: string | null,
    value: string,
  ): Promise<boolean> {
    return this.#state.compareAndSet([scope, key], expected, value);
  }

  stateKeys(
    scope: string,
    query: { prefix: string; after: string | null; limit: number },
  ): Promise<string[]> {
    return this.#state.keys([scope], query);
  }
}

/**
 * A SQL backend's mutations, each one call of a procedure or function, by name; values as in
 * `SqlReads`. Each returns one row: a status, and the columns that status needs.
 */
export interface SqlProcedures<S> {
  /**
   * sessionId, data, metadata, transcript, checkExpectedHead, expectedHead, idempotencyKey, now,
   * needs (JSON text of the array, `[]` when none)
   */
  append: S;
  /** sessionId, seq, checkExpectedHead, expectedHead, now */
  rollback: S;
  /** sessionId, atSeq, newId, now */
  fork: S;
  /** sessionId, keepLast; one row: `removed` (see CheckpointBackend.prune for what is kept) */
  prune: S;
  /** sessionId; one row: `deleted` (true or a count above 0 when there was a session) */
  delete: S;
}

/**
 * The values of the `append` procedure, in order: sessionId, data, metadata, transcript, whether
 * to check the head, the expected head, idempotencyKey, now, needs. An expected head travels as
 * a flag and a value, since null is a value of its own (the session must not exist); needs as
 * JSON text, which every dialect can take apart.
 */
export function appendProcedureArgs(input: AppendInput): unknown[] {
  return [
    input.sessionId,
    input.data,
    input.metadata,
    input.transcript,
    input.expectedHead !== undefined,
    input.expectedHead ?? null,
    input.idempotencyKey ?? null,
    input.now,
    needsArg(input.needs),
  ];
}

/** Needs as a statement takes them: JSON text of the array (`[]` when none). */
export function needsArg(needs: readonly number[]): string {
  return needs.length === 0 ? '[]' : JSON.stringify(needs);
}

/** The values of the `append`, `rollback` and `fork` procedures, in order. */
const procedureArgs = {
  append: appendProcedureArgs,
  rollback: (input: RollbackInput): unknown[] => [
    input.sessionId,
    input.seq,
    input.expectedHead !== undefined,
    input.expectedHead ?? null,
    input.now,
  ],
  fork: (input: ForkInput): unknown[] => [input.sessionId, input.atSeq, input.newId, input.now],
};

/** A SQL backend on which every operation is one statement: each mutation, one procedure call. */
export abstract class SqlProcedureBackend<S> extends SqlBackend<S> {
  readonly #procedures: SqlProcedures<S>;

  constructor(statements: SqlBackendStatements<S> & { procedures: SqlProcedures<S> }) {
    super(statements);
    this.#procedures = statements.procedures;
  }

  /** Checkpoints waiting for a busy pool, sent together (see batchAppends); else undefined. */
  #batches: BusyPoolBatches<AppendInput, AppendResult> | undefined;

  /** A checkpoint: in the next batch while the pool is busy (see batchAppends), else alone. */
  append(input: AppendInput): Promise<AppendResult> {
    if (this.#batches === undefined) return this.appendAlone(input);
    const bytes = input.data.length + input.metadata.length + input.transcript.length;
    return this.#batches.run(input, bytes);
  }

  /** A checkpoint by itself: one call of the append procedure. */
  protected async appendAlone(input: AppendInput): Promise<AppendResult> {
    return (await this.appendWith(this.#procedures.append, input))!;
  }

  /**
   * From now on, send the checkpoints that would wait for a connection of `pool` together, each
   * batch on a connection `pool` leases (group commit); a call goes alone through appendAlone.
   */
  protected batchAppends(pool: Omit<BatchPool<AppendInput, AppendResult>, 'alone'>): void {
    this.#batches = new BusyPoolBatches({ ...pool, alone: (input) => this.appendAlone(input) });
  }

  /**
   * How many batches of checkpoints that waited for a connection were sent, and how many calls
   * they carried (both 0 without group commit): to see whether the pool is the bottleneck.
   */
  get batched(): { batches: number; calls: number } {
    return { ...(this.#batches?.sent ?? { batches: 0, calls: 0 }) };
  }

  /**
   * Run an append statement given the append procedure's values: its one row's outcome, or null
   * for no row (a statement that writes only where it can go straight through, and otherwise
   * leaves the call to the procedure).
   */
  protected async appendWith(statement: S, input: AppendInput): Promise<AppendResult | null> {
    const { rows } = await this.send<AppendRow>(statement, procedureArgs.append(input));
    return rows[0] ? appendResultFromRow(rows[0]) : null;
  }

  async rollback(input: RollbackInput): Promise<RollbackResult> {
    const { rows } = await this.send<{ status: string; head: number | null }>(
      this.#procedures.rollback,
      procedureArgs.rollback(input),
    );
    return rollbackResultFromRow(rows[0]!);
  }

  async fork(input: ForkInput): Promise<ForkResult> {
    const { rows } = await this.send<{ status: string; seq: number | null }>(
      this.#procedures.fork,
      procedureArgs.fork(input),
    );
    return forkResultFromRow(rows[0]!);
  }

  async prune(sessionId: string, keepLast: number): Promise<number> {
    const { rows } = await this.send<{ removed: number | string }>(this.#procedures.prune, [
      sessionId,
      keepLast,
    ]);
    return Number(rows[0]!.removed);
  }

  async delete(sessionId: string): Promise<boolean> {
    // A boolean on PostgreSQL, a count on MySQL.
    const { rows } = await this.send<{ deleted: boolean | number }>(this.#procedures.delete, [
      sessionId,
    ]);
    return Number(rows[0]!.deleted) > 0;
  }
}
