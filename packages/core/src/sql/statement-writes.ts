/**
 * The write pipeline of a SQL backend whose mutations are statements (PostgreSQL, MySQL): the
 * adapter hands over its statements and its driver, and core composes the rest here. A
 * checkpoint goes: counted in flight, joined to a batch while every connection of the pool is
 * busy (group commit), else sent alone (the adapter's one plain statement where it has one,
 * then the append procedure), each statement run again while the server rolls it back.
 */
import type { AppendInput, AppendResult, ImportInput } from '../adapter/backend.js';
import { batchedAppends } from './batched-appends.js';
import { AGAIN, type BatchOutcome, type BatchPool } from './busy-pool-batches.js';
import { type HeldConnection, retrying, type SqlConnections, type SqlDriver } from './driver.js';
import type { CountedRun } from './in-flight.js';
import {
  type AppendValues,
  appendOutcome,
  appendValues,
  procedureWrites,
  type SqlProcedures,
} from './procedure-writes.js';
import { type RewriteValues, statementRewrite } from './rewrite.js';
import type { RunStatement } from './run.js';
import type { SqlWrites } from './sql-backend.js';
import type { SqlStatement } from './statement.js';

/** Checkpoints appended together in one statement, while every connection is busy. */
export interface SqlAppendBatch<S> {
  /**
   * Which of `inputs` the statement takes, by index, in the order it takes them (none: each
   * goes alone). The others go alone once the batch is done.
   */
  carries(inputs: readonly AppendInput[]): number[];
  /** The statement that appends `n` checkpoints at once. */
  statement(n: number): SqlStatement<S, AppendValues[]>;
  /**
   * What the statement's rows say of each checkpoint it carried, in the order carried: its
   * result, the error that refused it alone, or AGAIN (it goes alone).
   */
  outcomes(
    rows: readonly Record<string, unknown>[],
    carried: readonly AppendValues[],
  ): BatchOutcome<AppendResult>[];
}

/** A SQL backend's mutations as statements, each with what it is handed. */
export interface SqlWriteStatements<S> extends SqlProcedures<S> {
  /**
   * Changes a checkpoint's data and transcript only while both still hold the texts compared;
   * returns (or changes) a row only when it did.
   */
  rewrite: SqlStatement<S, RewriteValues>;
  /**
   * A checkpoint without a key or needs as one plain statement, cheaper than the procedure:
   * it returns the append's row where it wrote, and no row where it could not go straight
   * through; the procedure then decides.
   */
  appendDirect?: SqlStatement<S, AppendValues>;
  /** Group commit's statement; without it, every checkpoint goes alone. */
  appendBatch?: SqlAppendBatch<S>;
  /**
   * An import as statements: `whereFree` writes the whole session in one statement where its
   * id is free (one row: `imported`, 0 when taken); to replace a session, `removeSession`
   * then `whereFree` run in one transaction (SqlDriver.transaction). Without it, the adapter
   * writes importSession itself.
   */
  importing?: {
    whereFree: SqlStatement<S, ImportInput>;
    removeSession: SqlStatement<S, { sessionId: string }>;
  };
}

/** How many batches group commit sent, and how many checkpoints they carried. */
export interface BatchCounts {
  batches: number;
  calls: number;
}

/**
 * The mutations of `statements` on `driver`, through `counted` (the backend's run, retried and
 * counted in flight): importSession only where the statements import. With `groupCommit`, a
 * driver that has connections and statements that batch send checkpoints together while the
 * pool is busy.
 */
export function statementWrites<S>(
  driver: SqlDriver<S>,
  counted: CountedRun<S>,
  statements: SqlWriteStatements<S>,
  groupCommit: boolean,
): { writes: Omit<SqlWrites, 'importSession'> & Partial<SqlWrites>; batched(): BatchCounts } {
  const { run } = counted;
  const procedural = procedureWrites(run, statements);
  const alone = statements.appendDirect
    ? directFirst(run, statements.appendDirect, procedural.append)
    : procedural.append;
  const { connections, transaction } = driver;
  const { appendBatch, importing } = statements;
  const batches =
    groupCommit && connections && appendBatch
      ? batchedAppends(
          busyPool(connections, appendBatch, {
            alone,
            inFlight: counted.inFlight,
            held: (held) => retrying(driver, held.run),
          }),
        )
      : undefined;
  return {
    writes: {
      ...procedural,
      append: batches?.append ?? alone,
      rewriteCheckpoint: statementRewrite(run, statements.rewrite),
      ...(importing && {
        importSession: async (input: ImportInput) => {
          const { whereFree, removeSession } = importing;
          const { rows } = await run<{ imported: number | string }>(
            whereFree.sql,
            whereFree.args(input),
          );
          if (Number(rows[0]!.imported) > 0) return 'imported';
          if (!input.replace) return 'exists';
          if (!transaction) throw new TypeError('statements that import need driver.transaction');
          return transaction(async (onOne) => {
            await onOne(removeSession.sql, removeSession.args(input));
            await onOne(whereFree.sql, whereFree.args(input));
            return 'imported' as const;
          });
        },
      }),
    },
    batched: () => batches?.sent() ?? { batches: 0, calls: 0 },
  };
}

/**
 * `direct` first where a checkpoint has no key, no needs and no tags; the procedure where it
 * wrote nothing.
 */
function directFirst<S>(
  run: RunStatement<S>,
  direct: SqlStatement<S, AppendValues>,
  procedure: (input: AppendInput) => Promise<AppendResult>,
): (input: AppendInput) => Promise<AppendResult> {
  return async (input) => {
    if (input.idempotencyKey === undefined && input.needs.length === 0 && !input.tags) {
      const { rows } = await run(direct.sql, direct.args(appendValues(input)));
      const written = appendOutcome(rows as never);
      if (written) return written;
    }
    return procedure(input);
  };
}

/** The pool as group commit uses it: busy while it has no connection free. */
function busyPool<S>(
  connections: SqlConnections<S>,
  batch: SqlAppendBatch<S>,
  backend: {
    /** A checkpoint sent by itself. */
    alone: (input: AppendInput) => Promise<AppendResult>;
    /** How many statements the backend has under way. */
    inFlight: () => number;
    /** How statements run on a held connection (retried). */
    held: (held: HeldConnection<S>) => RunStatement<S>;
  },
): BatchPool<AppendInput, AppendResult> {
  return {
    // The pool's counts change only once a statement reaches it, after a few awaits: the
    // statements this backend has started count from the moment they start.
    busy: () => backend.inFlight() >= connections.size || connections.full(),
    alone: backend.alone,
    lease: async () => {
      const held = await connections.hold();
      const run = backend.held(held);
      return {
        together: (inputs) => together(inputs, run, batch, connections),
        release: held.release,
      };
    },
  };
}

/** The checkpoints `batch` carries of `inputs`, as one statement on `run`; the rest AGAIN. */
async function together<S>(
  inputs: AppendInput[],
  run: RunStatement<S>,
  batch: SqlAppendBatch<S>,
  connections: SqlConnections<S>,
): Promise<BatchOutcome<AppendResult>[]> {
  const outcomes: BatchOutcome<AppendResult>[] = inputs.map(() => AGAIN);
  const carried = batch.carries(inputs);
  if (carried.length === 0) return outcomes;
  const values = carried.map((i) => appendValues(inputs[i]!));
  const statement = batch.statement(values.length);
  let rows: Record<string, unknown>[];
  try {
    ({ rows } = await run(statement.sql, statement.args(values)));
  } catch (err) {
    if (connections.refusedWhole?.(err)) return outcomes;
    throw err;
  }
  for (const [n, outcome] of batch.outcomes(rows, values).entries())
    outcomes[carried[n]!] = outcome;
  return outcomes;
}
