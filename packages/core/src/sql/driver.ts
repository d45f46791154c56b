/**
 * What a SQL adapter's driver does for core: run a statement, hold a connection, and say what
 * an error means. Core composes the rest (retries, in-flight counting, group commit, the
 * procedure calls; see statement-writes.ts), so a checkpoint crosses into the adapter's code
 * only where its driver runs the statement core chose.
 */
import { retryRolledBack } from '../adapter/retry.js';
import type { RunStatement } from './run.js';

/** How a SQL adapter reaches its database. */
export interface SqlDriver<S> {
  /**
   * Run `statement` with `values` (`$1` is the first) on any free connection, as a transaction
   * of its own, in one round trip.
   */
  run: RunStatement<S>;
  /**
   * The first row of a reading statement, or undefined; without it, `run`'s first row. For a
   * driver that fetches one row without a list of them (better-sqlite3's `get`), for the
   * single-row reads (load, session) that an agent makes at every step.
   */
  first?<Row>(statement: S, values: unknown[]): Promise<Row | undefined>;
  /**
   * Whether the server rolled back the whole statement that failed with `err` (a deadlock, a
   * serialization failure), or never ran it: core then runs it again (see retryRolledBack).
   */
  rolledBack?(err: unknown): boolean;
  /**
   * Run `work` in one transaction on one connection, at READ COMMITTED: committed when it
   * resolves, rolled back when it rejects. For writes of more than one statement (an import
   * that replaces a session).
   */
  transaction?<T>(work: (run: RunStatement<S>) => Promise<T>): Promise<T>;
  /** The pool's connections, for group commit; absent where there is no pool to wait for. */
  connections?: SqlConnections<S>;
}

/** A pool's connections, as group commit sees them. */
export interface SqlConnections<S> {
  /** How many connections the pool opens at most. */
  readonly size: number;
  /**
   * Whether the pool has no connection free for a statement sent now, by its own counts: those
   * of its other users included (core counts the statements it has in flight itself).
   */
  full(): boolean;
  /** A connection of the pool, held until released. */
  hold(): Promise<HeldConnection<S>>;
  /**
   * Whether `err` refused a statement whole, before any of it was written (a constraint that
   * failed it, a statement too large to send): the checkpoints it carried then go alone.
   */
  refusedWhole?(err: unknown): boolean;
}

/** A connection held for one batch. */
export interface HeldConnection<S> {
  run: RunStatement<S>;
  /** Give the connection back; `err` when it failed, so that the pool drops it. */
  release(err?: unknown): void;
}

/** `run` of `driver`'s, run again while the driver says the server rolled a statement back. */
export function retrying<S>(
  driver: Pick<SqlDriver<S>, 'rolledBack'>,
  run: RunStatement<S>,
): RunStatement<S> {
  const { rolledBack } = driver;
  if (rolledBack === undefined) return run;
  return <Row>(statement: S, values: unknown[]) =>
    retryRolledBack(() => run<Row>(statement, values), rolledBack);
}
