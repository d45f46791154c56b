/**
 * How a statement runs on one better-sqlite3 connection: prepared once with the SQL family's
 * `$n` parameters rewritten to `?`, and run synchronously, as better-sqlite3 does everything.
 */
import { positional, positionalValues, type SqlResult } from '@ckpt/core/sql';
import type Database from 'better-sqlite3';

/** A prepared statement and which value each of its `?` takes. */
export interface SqliteStatement {
  statement: Database.Statement;
  order: number[];
  /** Whether its `?` take the values as given, each once and in order. */
  inOrder: boolean;
}

/** Prepare `text` (with `$n` parameters) on `db`. */
export function prepare(db: Database.Database, text: string): SqliteStatement {
  const { sql, order } = positional(text);
  return { statement: db.prepare(sql), order, inOrder: order.every((n, i) => n === i) };
}

/** `values` in the statement's `?` order, each flag as SQLite stores it: the integer 1 or 0. */
export function bind(
  { order, inOrder }: SqliteStatement,
  values: readonly unknown[],
): readonly unknown[] {
  const args = inOrder && values.length === order.length ? values : positionalValues(order, values);
  return args.some((value) => typeof value === 'boolean')
    ? args.map((value) => (typeof value === 'boolean' ? Number(value) : value))
    : args;
}

/** The rows of a reading statement, at once: for a transaction, which cannot wait. */
export function rowsOf<Row>(prepared: SqliteStatement, values: unknown[]): Row[] {
  return prepared.statement.all(...bind(prepared, values)) as Row[];
}

/** The first row of a reading statement, or undefined. */
export function firstOf<Row>(prepared: SqliteStatement, values: unknown[]): Row | undefined {
  return prepared.statement.get(...bind(prepared, values)) as Row | undefined;
}

/** Run a statement: its rows when it reads, else how many rows it changed. */
export async function execute<Row>(
  prepared: SqliteStatement,
  values: unknown[],
): Promise<SqlResult<Row>> {
  const args = bind(prepared, values);
  return prepared.statement.reader
    ? { rows: prepared.statement.all(...args) as Row[], changed: 0 }
    : { rows: [], changed: prepared.statement.run(...args).changes };
}
