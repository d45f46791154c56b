/**
 * The SQL family writes statements with numbered parameters (`$1` is the first value, used as
 * often as the SQL needs it), as PostgreSQL takes them. A driver that takes only `?`, one per
 * value in order (mysql2, better-sqlite3), runs them as `positional` rewrites them.
 */

/** A statement as a driver of `?` placeholders takes it. */
export interface Positional {
  /** The SQL with a `?` for each `$n`. */
  sql: string;
  /** For each `?`, left to right, the index of the value it takes. */
  order: number[];
}

/** `text`, written with `$n` parameters, as SQL with `?` and the order of its values. */
export function positional(text: string): Positional {
  const order: number[] = [];
  const sql = text.replace(/\$(\d+)/g, (_, n: string) => {
    order.push(Number(n) - 1);
    return '?';
  });
  return { sql, order };
}

/** `values` (in `$n` order) as the `?` of a statement whose `order` this is take them. */
export function positionalValues(order: readonly number[], values: readonly unknown[]): unknown[] {
  return order.map((i) => values[i]);
}
