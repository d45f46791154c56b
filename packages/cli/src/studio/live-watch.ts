/**
 * Live updates from a store with a change log: one `store.watch()` for the watched thing (the
 * catalog by its prefix, a session by its id), and a read of the thing each time the watch says
 * it changed, so that nothing is read while nothing changes. A watch that fails (EXPIRED: the
 * log let go of changes it had not given yet; or a read of the server that failed) cannot tell
 * what it missed: the thing is read again, and watched anew after a pause that doubles with each
 * failure in a row. A store that refuses to watch after all (UNSUPPORTED) is polled.
 */
import { type CheckpointStore, isCkptError, type WatchOptions } from '@ckpt/core';
import type { LiveTarget, Refresh } from './live.js';
import { pause, poll } from './live-poll.js';

/** The pause before watching again after a failure, doubled with each failure in a row up to the most. */
const RETRY_FIRST_MS = 250;
const RETRY_MOST_MS = 10_000;

/** How to follow one watched thing. */
export interface FollowOptions {
  store: CheckpointStore;
  target: LiveTarget;
  /** Read the thing, and send it to its pages when it changed. */
  refresh: Refresh;
  /** How often to read instead, should the store refuse to watch. */
  pollMs: number;
  /** Ends the following: the last page left, or the studio closed. */
  signal: AbortSignal;
}

/** What a watch of `target` follows. */
function watchOptions(target: LiveTarget): WatchOptions {
  return target.kind === 'catalog' ? { prefix: target.prefix } : { sessionId: target.sessionId };
}

/** Read `target` now and each time the store says it changed, until `signal` aborts or the store closes. */
export async function follow(options: FollowOptions): Promise<void> {
  const { store, target, refresh, pollMs, signal } = options;
  for (let failures = 0; !signal.aborted; ) {
    try {
      const changes = store.watch({ ...watchOptions(target), signal });
      await changes.ready;
      // Read once the watch holds its place: any change after this read is among its events.
      await refresh();
      for await (const change of changes) {
        failures = 0;
        // A state value (of a scope named like the session, or with the prefix) is not shown here.
        if (change.kind !== 'state') void refresh();
      }
      // The signal aborted, or the store closed.
      return;
    } catch (err) {
      if (signal.aborted || isCkptError(err, 'CLOSED')) return;
      if (isCkptError(err, 'UNSUPPORTED')) return poll(refresh, pollMs, signal);
      // What changed since the watch's last event cannot be told: read the thing again (a read
      // that fails too shows on the page as a failure), then watch anew.
      await refresh();
      // An id or prefix the store refuses: the read said so, and no change will ever come.
      if (isCkptError(err, 'INVALID_ARGUMENT')) return;
      await pause(Math.min(RETRY_FIRST_MS * 2 ** failures++, RETRY_MOST_MS), signal);
    }
  }
}
