/**
 * How statements go to a pool: prepared once per connection where it keeps them, with the
 * per-query type parsing they need, at READ COMMITTED once the server rolled one back at a
 * stricter level.
 */
import { createHash } from 'node:crypto';
import { errorCode } from '@ckpt/core/adapter';
import type { SqlResult } from '@ckpt/core/sql';
import pg from 'pg';

// bigint columns (seq, times) come back as JavaScript numbers; they stay far below 2^53.
// Passed with each query, so that the user's own pool keeps its global type parsers.
const INT8 = 20;
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

// A serialization failure or a deadlock: the server has rolled back the whole call (each runs
// in a transaction of its own), so running it again is safe; core does (SqlDriver.rolledBack).
const SERIALIZATION_FAILURE = '40001';
const ROLLED_BACK = new Set([SERIALIZATION_FAILURE, '40P01']);

/** Whether the server rolled back the whole statement that failed with `err`. */
export const rolledBackWhole = (err: unknown): boolean => ROLLED_BACK.has(errorCode(err));

/** A statement; one with a name is prepared under it (see statementRunner). */
export interface Statement {
  readonly text: string;
  readonly name?: string;
}

/** A statement's SQL as the runner takes it: prepared, or text parsed on each call. */
export type PostgresSql = Statement | string;

/**
 * `text` as a statement each connection parses and plans once, named after a hash of its text:
 * for statements whose best plan does not depend on their values (primary-key lookups and
 * function calls), where parsing and planning would otherwise take a good part of the call.
 */
export function prepared(text: string): Statement {
  return { text, name: `ckpt_${createHash('sha256').update(text).digest('hex').slice(0, 32)}` };
}

// A connection that does not keep what was prepared on it (PgBouncer before 1.21 in
// transaction mode hands each statement to any server connection; a reset such as DISCARD ALL
// drops them), or a plan cached before a migration changed the columns a function returns.
// Each is raised before the statement runs; and a statement is a transaction of its own, so
// whatever fails leaves nothing behind to run twice.
const NOT_PREPARED = new Set(['26000', '42P05', '0A000']);

/**
 * Runs statements on `pool`, each once `ready` (the migration) has resolved. Named statements
 * are prepared on each connection the first time they run there; from the first time a
 * connection refuses a name, this runner sends every statement unnamed (parsed on each call),
 * which works through any pooler. Every statement runs in a transaction of its own, so one
 * refused before it ran is simply sent again. With `prepare` false, every statement goes
 * unnamed from the start. A statement the server rolled back fails here: core runs it again.
 */
export function statementRunner(
  pool: pg.Pool,
  prepare: boolean,
  ready: Promise<void>,
): PostgresRunStatement {
  let named = prepare;
  const rolledBack = new Set<string>();
  const send = async (statement: PostgresSql, values: unknown[], on: Queryable) => {
    await ready;
    const run = (text: string, name?: string) => runStatement(on, text, values, rolledBack, name);
    const { text, name } = typeof statement === 'string' ? { text: statement } : statement;
    if (!named || name === undefined) return run(text);
    try {
      return await run(text, name);
    } catch (err) {
      if (!NOT_PREPARED.has(errorCode(err))) throw err;
      named = false;
      return run(text);
    }
  };
  return async <Row>(statement: PostgresSql, values: unknown[], on: Queryable = pool) => {
    const result = await send(statement, values, on);
    return { rows: result.rows as Row[], changed: result.rowCount ?? 0 };
  };
}

/** Where a statement runs: the pool (any free connection), or a connection taken from it. */
export type Queryable = pg.Pool | pg.PoolClient;

/** Runs a statement (see statementRunner), on the pool or on a connection leased from it. */
export type PostgresRunStatement = <Row = Record<string, unknown>>(
  statement: PostgresSql,
  values: unknown[],
  on?: Queryable,
) => Promise<SqlResult<Row>>;

/**
 * Run one statement. Serialization failures come only from a pool whose default isolation is
 * REPEATABLE READ or SERIALIZABLE, where a writer that waited for a session row fails once the
 * row changes. ckpt's functions are written for READ COMMITTED, where the writer goes on with
 * the row as changed, so such a call runs again (core runs it again, see `rolledBackWhole`) at READ
 * COMMITTED: retrying at the stricter level would fail over and over while other writers keep
 * one session busy. A statement rolled back once (`rolledBack` holds its text) runs at READ
 * COMMITTED from then on: calls that first tried the stricter level, beside reruns at READ
 * COMMITTED on the same row, kept losing to them, and many writers on one session slowed to a
 * crawl (the package README gives the figures).
 */
async function runStatement(
  on: Queryable,
  text: string,
  values: unknown[],
  rolledBack: Set<string>,
  name?: string,
): Promise<pg.QueryResult> {
  if (rolledBack.has(text)) return atReadCommitted(on, text, values);
  try {
    return await on.query({ text, values, types: TYPES, ...(name && { name }) });
  } catch (err) {
    if (errorCode(err) === SERIALIZATION_FAILURE) rolledBack.add(text);
    throw err;
  }
}

/**
 * The statement in a transaction at READ COMMITTED. SET TRANSACTION must open the transaction,
 * so both go in one simple query (one round trip, one transaction, undone whole on an error),
 * which carries no parameters: the values go in as literals.
 */
async function atReadCommitted(
  on: Queryable,
  text: string,
  values: unknown[],
): Promise<pg.QueryResult> {
  const inlined = text.replace(/\$(\d+)/g, (_, n: string) => literal(values[Number(n) - 1]));
  const results = (await on.query({
    text: `SET TRANSACTION ISOLATION LEVEL READ COMMITTED; ${inlined}`,
    types: TYPES,
  })) as unknown as pg.QueryResult[];
  return results[1]!;
}

/**
 * A statement's value as an SQL literal: text, bytes, an integer, a boolean, null, or an array
 * of them.
 */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  // Hex digits need no quoting, whatever standard_conforming_strings says.
  if (Buffer.isBuffer(value)) return `decode('${value.toString('hex')}', 'hex')`;
  // The statement casts it to its element type.
  if (Array.isArray(value)) return `ARRAY[${value.map(literal).join(', ')}]`;
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') return String(value);
  return pg.escapeLiteral(String(value));
}
