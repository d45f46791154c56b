/**
 * A runner that counts the statements it has started and not yet finished: the connections a
 * backend keeps busy, counted from the moment each starts, before the driver's pool sees it
 * (a pool's own counts change only after a few awaits). Group commit reads it to tell whether
 * a checkpoint sent now would wait for a connection.
 */
import type { RunStatement } from './run.js';

/** `run`, counting; `inFlight()` says how many of its statements are under way. */
export function countInFlight<S>(run: RunStatement<S>): {
  run: RunStatement<S>;
  inFlight(): number;
} {
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
