/**
 * The mutations of a SQL backend whose every mutation is one call of a procedure or function its
 * migrations created (PostgreSQL, MySQL): what each call is handed, and what its one row means.
 * Which parameter takes which value is the procedure statement's own (see statement.ts).
 */
import type {
  AppendInput,
  AppendResult,
  DeleteIdleResult,
  ForkInput,
  ForkResult,
  PinResult,
  PruneRule,
  RollbackInput,
  RollbackResult,
  Tags,
} from '../adapter/backend.js';
import {
  type AppendRow,
  appendResultFromRow,
  deleteIdleResultFromRow,
  forkResultFromRow,
  idleBatchFromRow,
  pinResultFromRow,
  rollbackResultFromRow,
  tagsArg,
} from './rows.js';
import type { RunStatement } from './run.js';
import type { SqlWrites } from './sql-backend.js';
import type { SqlStatement } from './statement.js';

/**
 * A checkpoint as the append procedure takes it. An expected head travels as a flag and a
 * value, since null is a value of its own (the session must not exist); needs as JSON text,
 * which every dialect can take apart.
 */
export interface AppendValues {
  sessionId: string;
  data: string;
  metadata: string;
  transcript: string;
  /** Whether to check the head against expectedHead. */
  checkHead: boolean;
  expectedHead: number | null;
  idempotencyKey: string | null;
  now: number;
  /** JSON text of the array of seqs it needs, `[]` when none. */
  needs: string;
  /**
   * Whether the append sets the session's tags: to `tags` (null: none); else it leaves them. A
   * flag and a value, as the expected head.
   */
  setTags: boolean;
  tags: string | null;
}

/** A checkpoint's values as the append procedure takes them (see AppendValues). */
export function appendValues(input: AppendInput): AppendValues {
  return {
    sessionId: input.sessionId,
    data: input.data,
    metadata: input.metadata,
    transcript: input.transcript,
    checkHead: input.expectedHead !== undefined,
    expectedHead: input.expectedHead ?? null,
    idempotencyKey: input.idempotencyKey ?? null,
    now: input.now,
    needs: needsArg(input.needs),
    setTags: input.tags !== undefined,
    tags: tagsArg(input.tags),
  };
}

/** A rollback as the rollback procedure takes it; the expected head as in AppendValues. */
export interface RollbackValues {
  sessionId: string;
  seq: number;
  checkHead: boolean;
  expectedHead: number | null;
  now: number;
}

/** Needs as a statement takes them: JSON text of the array (`[]` when none). */
export function needsArg(needs: readonly number[]): string {
  return needs.length === 0 ? '[]' : JSON.stringify(needs);
}

/**
 * A SQL backend's mutations, each one call of a procedure or function, by name, with what each
 * is handed. Each returns one row: a status, and the columns that status needs.
 */
export interface SqlProcedures<S> {
  append: SqlStatement<S, AppendValues>;
  rollback: SqlStatement<S, RollbackValues>;
  fork: SqlStatement<S, ForkInput>;
  /** One row: `removed` (see CheckpointBackend.prune for what is kept). */
  prune: SqlStatement<S, PruneValues>;
  /** One row: `deleted` (true or a count above 0 when there was a session). */
  delete: SqlStatement<S, { sessionId: string }>;
  /** One row: `status`, `done`, `no_session` or `no_seq`. */
  pin: SqlStatement<S, { sessionId: string; seq: number; note: string | null }>;
  /** One row: `unpinned` (true or 1 when a pin went). */
  unpin: SqlStatement<S, { sessionId: string; seq: number }>;
  /** One row: `checkpoints`, the count of the session deleted, or null when it was kept. */
  deleteIdle: SqlStatement<S, { sessionId: string; idleBefore: number; dryRun: boolean }>;
  /** One row: `sessions` and `checkpoints`, how many of each went (null or 0 for none). */
  deleteIdleBatch: SqlStatement<S, { idleBefore: number; limit: number }>;
  /**
   * Optional: one row, `removed`, the sum of a prune of each session, all in one statement
   * (see CheckpointBackend.pruneBatch). Without it, a batch runs the prunes side by side.
   */
  pruneBatch?: SqlStatement<S, PruneBatchValues>;
  /**
   * Optional: one row, `done` (true or a count above 0 when the session exists), having set its
   * tags to `tags` (JSON text as tagsArg makes it; null: none) in one step: the row's column
   * and the tag index. With it, and `taggedSessions` among the reads, the backend keeps tags.
   */
  setTags?: SqlStatement<S, { sessionId: string; tags: string | null }>;
}

/** A prune as the prune procedure takes it: the rule's two bounds (null: none) and dryRun. */
export interface PruneValues {
  sessionId: string;
  keepLast: number | null;
  createdBefore: number | null;
  dryRun: boolean;
}

/** A batch of prunes as the batch statement takes it: the sessions' ids, and one rule for all. */
export interface PruneBatchValues extends Omit<PruneValues, 'sessionId'> {
  sessionIds: readonly string[];
}

/** The outcome of an append statement's rows: its one row's, or null for no row. */
export function appendOutcome(rows: readonly AppendRow[]): AppendResult | null {
  return rows[0] ? appendResultFromRow(rows[0]) : null;
}

/** The mutations but importSession and rewriteCheckpoint, each one call of `procedures` through `run`. */
export function procedureWrites<S>(
  run: RunStatement<S>,
  procedures: SqlProcedures<S>,
): Omit<SqlWrites, 'importSession' | 'rewriteCheckpoint'> {
  const call = <In, Row>(statement: SqlStatement<S, In>, input: In) =>
    run<Row>(statement.sql, statement.args(input)).then(({ rows }) => rows[0]!);
  const { pruneBatch, setTags } = procedures;
  return {
    ...(setTags && {
      setTags: async (sessionId: string, tags: Tags) =>
        Number(
          (
            await call<{ sessionId: string; tags: string | null }, { done: boolean | number }>(
              setTags,
              { sessionId, tags: tagsArg(tags) },
            )
          ).done,
        ) > 0,
    }),
    ...(pruneBatch && {
      pruneBatch: async (sessionIds: readonly string[], rule: PruneRule, dryRun: boolean) =>
        Number(
          (
            await call<PruneBatchValues, { removed: number | string | null }>(pruneBatch, {
              sessionIds,
              ...rule,
              dryRun,
            })
          ).removed ?? 0,
        ),
    }),
    append: async (input: AppendInput): Promise<AppendResult> =>
      appendResultFromRow(
        await call<AppendValues, AppendRow>(procedures.append, appendValues(input)),
      ),
    rollback: async (input: RollbackInput): Promise<RollbackResult> =>
      rollbackResultFromRow(
        await call<RollbackValues, { status: string; head: number | null }>(procedures.rollback, {
          sessionId: input.sessionId,
          seq: input.seq,
          checkHead: input.expectedHead !== undefined,
          expectedHead: input.expectedHead ?? null,
          now: input.now,
        }),
      ),
    fork: async (input: ForkInput): Promise<ForkResult> =>
      forkResultFromRow(
        await call<ForkInput, { status: string; seq: number | null }>(procedures.fork, input),
      ),
    prune: async (sessionId: string, rule: PruneRule, dryRun = false): Promise<number> =>
      Number(
        (
          await call<PruneValues, { removed: number | string }>(procedures.prune, {
            sessionId,
            ...rule,
            dryRun,
          })
        ).removed,
      ),
    // A boolean on PostgreSQL, a count on MySQL.
    delete: async (sessionId: string): Promise<boolean> =>
      Number(
        (
          await call<{ sessionId: string }, { deleted: boolean | number }>(procedures.delete, {
            sessionId,
          })
        ).deleted,
      ) > 0,
    pin: async (input): Promise<PinResult> =>
      pinResultFromRow(await call<typeof input, { status: string }>(procedures.pin, input)),
    // A boolean on PostgreSQL, a count on MySQL.
    unpin: async (sessionId: string, seq: number): Promise<boolean> =>
      Number(
        (
          await call<{ sessionId: string; seq: number }, { unpinned: boolean | number }>(
            procedures.unpin,
            { sessionId, seq },
          )
        ).unpinned,
      ) > 0,
    deleteIdle: async (
      sessionId: string,
      idleBefore: number,
      dryRun: boolean,
    ): Promise<DeleteIdleResult> =>
      deleteIdleResultFromRow(
        await call<
          { sessionId: string; idleBefore: number; dryRun: boolean },
          { checkpoints: number | string | null }
        >(procedures.deleteIdle, { sessionId, idleBefore, dryRun }),
      ),
    deleteIdleBatch: async (query: { idleBefore: number; limit: number }) =>
      idleBatchFromRow(
        await call<
          { idleBefore: number; limit: number },
          { sessions: number | string | null; checkpoints: number | string | null }
        >(procedures.deleteIdleBatch, query),
      ),
  };
}
