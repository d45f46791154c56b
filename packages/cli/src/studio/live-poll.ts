/**
 * Live updates from a store that cannot tell when it changed (no change log: `watch()` is
 * UNSUPPORTED): the watched thing is read at once, then every `everyMs` while a page watches.
 */
import { setTimeout as sleep } from 'node:timers/promises';
import type { Refresh } from './live.js';

/** Wait `ms`, or less when `signal` aborts; never rejects, and never keeps the process alive. */
export function pause(ms: number, signal: AbortSignal): Promise<void> {
  return sleep(ms, undefined, { signal, ref: false }).catch(() => {});
}

/** Read now, then `everyMs` after each read ends, until `signal` aborts. */
export async function poll(refresh: Refresh, everyMs: number, signal: AbortSignal): Promise<void> {
  while (!signal.aborted) {
    await refresh();
    await pause(everyMs, signal);
  }
}
