/**
 * The MySQL / MariaDB backend's mutations. Each is one CALL of a stored procedure (one
 * transaction); while every connection of the pool is busy, the checkpoints that wait for one
 * go together, as one CALL of `append_batch`. An import is one transaction of plain statements.
 */
import {
  type AppendInput,
  type AppendResult,
  errorCode,
  type ImportInput,
  storedBytesOf,
} from '@ckpt/core/adapter';
import {
  AGAIN,
  type AppendRow,
  appendResultFromRow,
  appendValues,
  type BatchAppendRow,
  type BatchOutcome,
  batchAppendOutcomeFromRow,
  batchedAppends,
  importedPins,
  importedSessionRow,
  procedureWrites,
  type RunStatement,
  type SqlWrites,
  statementRewrite,
} from '@ckpt/core/sql';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { type MysqlRunStatement, type MysqlStatement, valueBytes } from './runner.js';
import type { backendStatements } from './statements.js';

/** What the writes run on. */
export interface MysqlWriting {
  pool: Pool;
  /** Statements on the pool, counted while in flight (see countInFlight). */
  counted: { run: RunStatement<MysqlStatement>; inFlight(): number };
  /** Statements on the pool or on a connection leased from it. */
  runOn: MysqlRunStatement;
  /** Whether statements go prepared (values as they are) or as text (values escaped into it). */
  prepared: boolean;
  statements: ReturnType<typeof backendStatements>;
  /** The largest packet the server takes, once the migration has found it. */
  packetBytes: Promise<number>;
  /** How many connections the pool opens at most; with group commit, else undefined. */
  groupCommit: number | undefined;
}

/** The mutations, and how many checkpoints group commit batched. */
export function mysqlWrites(on: MysqlWriting): {
  writes: SqlWrites;
  batched(): { batches: number; calls: number };
} {
  const procedural = procedureWrites(on.counted.run, on.statements.procedures);
  const batches =
    on.groupCommit === undefined ? undefined : groupCommit(on, on.groupCommit, procedural.append);
  const writes: SqlWrites = {
    ...procedural,
    append: batches?.append ?? procedural.append,
    importSession: (input) => importSession(on, input),
    rewriteCheckpoint: statementRewrite(on.counted.run, on.statements.rewrite),
  };
  return { writes, batched: () => batches?.sent() ?? { batches: 0, calls: 0 } };
}

// Room in a packet for what is not the batch: the statement's text and the protocol's framing.
const PACKET_SLACK = 64 * 1024;

// A call of a batch that waited too long for a lock undid only its own savepoint; alone, it
// goes through the runner, which retries that (a deadlock fails the whole batch, which the
// runner runs again).
const AGAIN_ALONE = new Set(['1205']);

/** Session ids as the server orders them: by UTF-8 bytes. */
const byIdBytes = (a: AppendInput, b: AppendInput) =>
  Buffer.compare(Buffer.from(a.sessionId), Buffer.from(b.sessionId));

/** Checkpoints that wait for one of the pool's `size` connections, sent as one CALL. */
function groupCommit(
  on: MysqlWriting,
  size: number,
  alone: (input: AppendInput) => Promise<AppendResult>,
) {
  const { pool, statements } = on;
  const waiting = (pool as { pool?: { _connectionQueue?: { length: number } } }).pool
    ?._connectionQueue;
  /** Send `inputs` as one CALL on `conn`; one at a time where they would not fit a packet. */
  const together = async (
    inputs: AppendInput[],
    conn: PoolConnection,
  ): Promise<BatchOutcome<AppendResult>[]> => {
    const { append } = statements.procedures;
    const aloneOn = async (input: AppendInput): Promise<BatchOutcome<AppendResult>> => {
      try {
        const args = append.args(appendValues(input));
        const { rows } = await on.runOn<AppendRow>(append.sql, args, conn);
        return { value: appendResultFromRow(rows[0]!) };
      } catch (err) {
        return { error: err };
      }
    };
    const ordered = inputs
      .map((input, i) => ({ input, i }))
      .sort((a, b) => byIdBytes(a.input, b.input));
    const batch = statements.appendBatch;
    const args = batch.args(ordered.map(({ input }) => appendValues(input)));
    const bytes = valueBytes(args, !on.prepared);
    if (inputs.length === 1 || bytes + PACKET_SLACK > (await on.packetBytes)) {
      const outcomes: BatchOutcome<AppendResult>[] = [];
      for (const input of inputs) outcomes.push(await aloneOn(input));
      return outcomes;
    }
    const { rows } = await on.runOn<BatchAppendRow>(batch.sql, args, conn);
    const outcomes = new Array<BatchOutcome<AppendResult>>(inputs.length);
    for (const [n, { i }] of ordered.entries()) {
      const outcome = batchAppendOutcomeFromRow(rows[n]!);
      outcomes[i] =
        'error' in outcome && AGAIN_ALONE.has(errorCode(outcome.error)) ? AGAIN : outcome;
    }
    return outcomes;
  };
  return batchedAppends({
    // The statements this backend has started count from the moment they start; the pool's
    // queue (mysql2 keeps no public count) holds those of anyone else who shares it.
    busy: () => on.counted.inFlight() >= size || (waiting?.length ?? 0) > 0,
    alone,
    lease: async () => {
      const conn = await pool.getConnection();
      return {
        together: (inputs) => together(inputs, conn),
        release: (err) => (err === undefined ? conn.release() : conn.destroy()),
      };
    },
  });
}

// Rows of one multi-row INSERT of an import, by the bytes of their values: far below any
// server's max_allowed_packet, even escaped. A row larger than that goes alone, prepared.
const IMPORT_CHUNK_BYTES = 1024 * 1024;

/** `rows` in runs of at most IMPORT_CHUNK_BYTES (a larger row alone). */
function chunks<T>(rows: T[], bytes: (row: T) => number): T[][] {
  const out: T[][] = [];
  let run: T[] = [];
  let size = 0;
  for (const row of rows) {
    const b = bytes(row);
    if (run.length > 0 && size + b > IMPORT_CHUNK_BYTES) {
      out.push(run);
      run = [];
      size = 0;
    }
    run.push(row);
    size += b;
  }
  if (run.length > 0) out.push(run);
  return out;
}

const DUPLICATE_ENTRY = 'ER_DUP_ENTRY';

/** One transaction on one connection (see importStatements). */
async function importSession(on: MysqlWriting, input: ImportInput): Promise<'imported' | 'exists'> {
  await on.packetBytes;
  const sql = on.statements.importing;
  const id = input.sessionId;
  const cps = input.checkpoints;
  const conn = await on.pool.getConnection();
  const insert = async (into: { table: string; columns: string }, rows: unknown[][]) => {
    for (const run of chunks(rows, (row) =>
      row.reduce<number>(
        (n, v) => n + (typeof v === 'string' || Buffer.isBuffer(v) ? v.length : 8),
        0,
      ),
    )) {
      const text = sql.insert(into.table, into.columns, run.length);
      // Alone, a row goes prepared (sent as it is); a run goes as text, one statement.
      if (run.length === 1) await conn.execute(text, run[0] as never);
      else await conn.query(text, run.flat());
    }
  };
  let failure: unknown;
  try {
    await conn.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await conn.query('START TRANSACTION');
    const [found] = (await conn.query(sql.lockSession, [id])) as unknown as [unknown[]];
    if (found.length > 0) {
      if (!input.replace) {
        await conn.query('ROLLBACK');
        return 'exists';
      }
      for (const statement of sql.removeSession) await conn.query(statement, [id]);
    }
    await insert(
      sql.rows.checkpoints,
      cps.map((cp) => [id, cp.seq, cp.parent, cp.createdAt, cp.metadata]),
    );
    await insert(
      sql.rows.bodies,
      cps.map((cp) => [id, cp.seq, storedBytesOf(cp.data)]),
    );
    await insert(
      sql.rows.transcripts,
      cps
        .filter((cp) => cp.transcript !== '[]')
        .map((cp) => [id, cp.seq, storedBytesOf(cp.transcript)]),
    );
    await insert(
      sql.rows.needs,
      cps.flatMap((cp) => cp.needs.map((needed) => [id, cp.seq, needed])),
    );
    await insert(
      sql.rows.pins,
      importedPins(input).map((pin) => [id, pin.seq, pin.note]),
    );
    const row = importedSessionRow(input);
    await conn.query(sql.insertSession(Object.keys(row)), Object.values(row));
    await conn.query('COMMIT');
    return 'imported';
  } catch (err) {
    failure = err;
    await conn.query('ROLLBACK').catch(() => {});
    if (errorCode(err) !== DUPLICATE_ENTRY) throw err;
  } finally {
    if (failure === undefined || errorCode(failure) === DUPLICATE_ENTRY) conn.release();
    else conn.destroy();
  }
  // Another writer created the session between the lock (which found no row) and the
  // insert: it exists now, and a replace locks and removes it on the next try.
  return input.replace ? importSession(on, input) : 'exists';
}
