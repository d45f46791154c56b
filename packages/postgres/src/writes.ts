/**
 * The PostgreSQL backend's mutations. Each is one statement, most of them a call of a function
 * the migration created (one round trip, one transaction); a checkpoint without a key or needs
 * first tries one plain statement (see appendDirect), and one that conflicts then takes a
 * second. While every connection of the pool is busy, the checkpoints that wait for one go
 * together (group commit). Nothing depends on session state between statements, so any pool or
 * PgBouncer in transaction mode works.
 */
import type { AppendInput, AppendResult, ImportInput } from '@ckpt/core/adapter';
import {
  AGAIN,
  type AppendRow,
  appendOutcome,
  appendValues,
  type BatchOutcome,
  batchedAppends,
  procedureWrites,
  type RunStatement,
  type SqlStatement,
  type SqlWrites,
  statementRewrite,
} from '@ckpt/core/sql';
import pg from 'pg';
import { lease, readCommitted } from './lease.js';
import type { PostgresRunStatement, PostgresSql } from './runner.js';
import type { backendStatements } from './statements.js';

/**
 * Whether the server refused a whole statement, which it then rolled back: an error of
 * severity ERROR, not a broken connection (whose outcome nobody knows).
 */
const refusedWhole = (err: unknown) => err instanceof pg.DatabaseError && err.severity === 'ERROR';

/** What the writes run on. */
export interface PostgresWriting {
  pool: pg.Pool;
  /** Statements on the pool, counted while in flight (see countInFlight). */
  counted: { run: RunStatement<PostgresSql>; inFlight(): number };
  /** Statements on the pool or on a connection leased from it. */
  runOn: PostgresRunStatement;
  statements: ReturnType<typeof backendStatements>;
  groupCommit: boolean;
}

/** The mutations, and how many checkpoints group commit batched. */
export function postgresWrites(on: PostgresWriting): {
  writes: SqlWrites;
  batched(): { batches: number; calls: number };
} {
  const { statements } = on;
  const procedural = procedureWrites(on.counted.run, statements.procedures);
  const direct = statements.appendDirect;
  const alone = async (input: AppendInput): Promise<AppendResult> => {
    // A checkpoint with a key or with needs is for the function alone (see appendDirect).
    if (input.idempotencyKey === undefined && input.needs.length === 0) {
      const { rows } = await on.counted.run<AppendRow>(
        direct.sql,
        direct.args(appendValues(input)),
      );
      const written = appendOutcome(rows);
      if (written) return written;
    }
    return procedural.append(input);
  };
  const batches = on.groupCommit ? groupCommit(on, alone) : undefined;
  return {
    writes: {
      ...procedural,
      append: batches?.append ?? alone,
      importSession: (input) => importSession(on, input),
      rewriteCheckpoint: statementRewrite(on.counted.run, statements.rewrite),
    },
    batched: () => batches?.sent() ?? { batches: 0, calls: 0 },
  };
}

/** Checkpoints that wait for a connection of the pool, sent together through appendSet. */
function groupCommit(on: PostgresWriting, alone: (input: AppendInput) => Promise<AppendResult>) {
  const { pool } = on;
  const size = (pool as { options?: { max?: number } }).options?.max ?? 10;
  /** The statements that append n calls at once, by n. */
  const sets = new Map<number, SqlStatement<PostgresSql, ReturnType<typeof appendValues>[]>>();
  const setOf = (n: number) => {
    let statement = sets.get(n);
    if (statement === undefined) {
      statement = on.statements.appendSet(n);
      sets.set(n, statement);
    }
    return statement;
  };
  /**
   * The first call of each session in `inputs` through appendSet on `client`; every other
   * call, each with needs (see appendDirect), and each that the statement did not write, goes
   * alone afterwards.
   */
  const together = async (
    inputs: AppendInput[],
    client: pg.PoolClient,
  ): Promise<BatchOutcome<AppendResult>[]> => {
    const first = new Map<string, number>();
    for (const [i, input] of inputs.entries()) {
      if (input.needs.length === 0 && !first.has(input.sessionId)) first.set(input.sessionId, i);
    }
    const outcomes: BatchOutcome<AppendResult>[] = inputs.map(() => AGAIN);
    if (first.size === 0) return outcomes;
    let rows: { id: string; seq: number; parent: number | null }[];
    try {
      const set = [...first.values()].map((i) => appendValues(inputs[i]!));
      const statement = setOf(set.length);
      ({ rows } = await on.runOn(statement.sql, statement.args(set), client));
    } catch (err) {
      if (refusedWhole(err)) return outcomes;
      throw err;
    }
    for (const row of rows) {
      outcomes[first.get(row.id)!] = {
        value: { status: 'written', seq: row.seq, parent: row.parent },
      };
    }
    return outcomes;
  };
  return batchedAppends({
    // The pool's counts change only once a statement reaches it, after a few awaits: the
    // statements this backend has started count from the moment they start.
    busy: () =>
      on.counted.inFlight() >= size ||
      pool.waitingCount > 0 ||
      (pool.idleCount === 0 && pool.totalCount >= size),
    alone,
    lease: async () => {
      const { client, release } = await lease(pool);
      return { together: (inputs) => together(inputs, client), release };
    },
  });
}

/**
 * One statement where the id is free (see importNew). To replace a session: remove it and
 * insert the new one in one transaction, on one connection.
 */
async function importSession(
  on: PostgresWriting,
  input: ImportInput,
): Promise<'imported' | 'exists'> {
  const { importNew, removeSession } = on.statements;
  const args = importNew.args(input);
  const { rows } = await on.counted.run<{ imported: number }>(importNew.sql, args);
  if (rows[0]!.imported > 0) return 'imported';
  if (!input.replace) return 'exists';
  return readCommitted(on.pool, async (client) => {
    await client.query(removeSession.sql, removeSession.args(input));
    await on.runOn(importNew.sql, args, client);
    return 'imported' as const;
  });
}
