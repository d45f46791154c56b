/** What running one statement gives, and the shape of a function that runs one. */

/** What running a statement gave: its rows (ids as text), and how many rows it changed. */
export interface SqlResult<Row = Record<string, unknown>> {
  rows: Row[];
  changed: number;
}

/** Run `statement` with `values` (`$1` is the first) in one round trip. */
export type RunStatement<S> = <Row = Record<string, unknown>>(
  statement: S,
  values: unknown[],
) => Promise<SqlResult<Row>>;
