/**
 * A runner that counts the statements it has started and not yet finished: the connections a
 * backend keeps busy, counted from the moment each starts, before the driver's pool sees it
 * (a pool's own counts change only after a few awaits). Group commit reads it to tell whether
 * a checkpoint sent now would wait for a connection.
 */
import type { RunStatement } from './run.js';

/** A run that counts its statements under way. */
export interface CountedRun<S> {
  run: RunStatement<S>;
  /** How many of its statements are under way. */
  inFlight(): number;
}

/** `run`, counting the statements it has under way. */
export function countInFlight<S>(run: RunStatement<S>): CountedRun<S> {
  let inFlight = 0;
  return {
    run: async <Row>(statement: S, values: unknown[]) => {
      inFlight++;
      try {
        return await run<Row>(statement, values);
      } finally {
        inFlight--;
      }
    },
    inFlight: () => inFlight,
  };
}
