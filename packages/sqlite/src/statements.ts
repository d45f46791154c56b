/**
 * Statements on one better-sqlite3 connection, written with the SQL family's `$n` parameters,
 * and how one runs: synchronously, as better-sqlite3 does everything.
 */
import { positional, positionalValues, type SqlResult } from '@ckpt/core/sql';
import type Database from 'better-sqlite3';

/** A prepared statement and which value each of its `?` takes. */
export interface SqliteStatement {
  statement: Database.Statement;
  order: number[];
}

/** Prepare `text` (with `$n` parameters) on `db`. */
export function prepare(db: Database.Database, text: string): SqliteStatement {
  const { sql, order } = positional(text);
  return { statement: db.prepare(sql), order };
}

/** Prepare each statement of a set. */
export function prepareAll<K extends string>(
  db: Database.Database,
  texts: Record<K, string>,
): Record<K, SqliteStatement> {
  const names = Object.keys(texts) as K[];
  return Object.fromEntries(names.map((name) => [name, prepare(db, texts[name])])) as Record<
    K,
    SqliteStatement
  >;
}

/** `values` in the statement's `?` order, each flag as SQLite stores it: the integer 1 or 0. */
function bind(order: readonly number[], values: readonly unknown[]): unknown[] {
  return positionalValues(order, values).map((value) =>
    typeof value === 'boolean' ? Number(value) : value,
  );
}

/** The rows of a reading statement, at once: for a transaction, which cannot wait. */
export function rowsOf<Row>({ statement, order }: SqliteStatement, values: unknown[]): Row[] {
  return statement.all(...bind(order, values)) as Row[];
}

/** Run a statement: its rows when it reads, else how many rows it changed. */
export async function execute<Row>(
  { statement, order }: SqliteStatement,
  values: unknown[],
): Promise<SqlResult<Row>> {
  const args = bind(order, values);
  return statement.reader
    ? { rows: statement.all(...args) as Row[], changed: 0 }
    : { rows: [], changed: statement.run(...args).changes };
}
