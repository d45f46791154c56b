/**
 * A statement as an adapter writes it: its SQL, and the values it takes in the order its
 * parameters name them, side by side in the adapter's statements file. Core hands a statement
 * an input (a session id, a query, a checkpoint) and runs what `args` makes of it; only the
 * statement knows which parameter is which.
 */

/** A statement in the adapter's form `S` (text, or prepared), and its values for an input. */
export interface SqlStatement<S, In> {
  sql: S;
  /** The values of `input`, in the order the statement's parameters take them (`$1` first). */
  args(input: In): unknown[];
}

/**
 * A statement written with named parameters (`:sessionId`, used as often as the SQL needs it),
 * as text with `$n` parameters numbered in order of first use, and the values of an input
 * object in that order. A `::` (PostgreSQL's cast) is not a parameter.
 */
export function named<In extends object>(text: string): SqlStatement<string, In> {
  const names: string[] = [];
  const sql = text.replace(/(?<![:\w]):([A-Za-z_]\w*)/g, (_, name: string) => {
    let n = names.indexOf(name);
    if (n < 0) n = names.push(name) - 1;
    return `$${n + 1}`;
  });
  return {
    sql,
    args: (input) => names.map((name) => (input as Record<string, unknown>)[name]),
  };
}

/** Each statement of a set, its SQL made ready by `prepare` (prepared, rewritten), its values as they were. */
export function prepareEach<T, S>(
  set: { [K in keyof T]: SqlStatement<string, T[K]> },
  prepare: (text: string) => S,
): { [K in keyof T]: SqlStatement<S, T[K]> } {
  const out: Partial<{ [K in keyof T]: SqlStatement<S, T[K]> }> = {};
  for (const key of Object.keys(set) as (keyof T)[]) {
    out[key] = { sql: prepare(set[key].sql), args: set[key].args };
  }
  return out as { [K in keyof T]: SqlStatement<S, T[K]> };
}
