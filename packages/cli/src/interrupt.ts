/**
 * Ctrl-C during a copy, an import, an export or a rekey: the first stops the work cleanly (the
 * sessions being written finish, every session stays whole or absent; an export's partial file
 * is removed) and the command says what it did and how to go on, exiting 130; a second Ctrl-C
 * quits at once, as Ctrl-C does elsewhere.
 */
import type { Context } from './context.js';

/** The work was stopped by Ctrl-C; its message says what was done and how to go on. */
export class Interrupted extends Error {}

/**
 * Run `work` with a signal that Ctrl-C aborts. When it stops because of that, the result is an
 * `Interrupted` error whose message is `stopped()`: what was done and how to go on. `stopping`:
 * what the command says it does meanwhile.
 */
export async function interruptible<T>(
  ctx: Context,
  work: (signal: AbortSignal) => Promise<T>,
  stopped: () => string,
  stopping = 'stopping after the sessions being written',
): Promise<T> {
  const controller = new AbortController();
  let stopListening = ctx.io.onInterrupt?.(() => {
    // From now on Ctrl-C does what it does by default: quit at once.
    stopListening?.();
    stopListening = undefined;
    ctx.note(`${stopping}; Ctrl-C again to quit at once`);
    controller.abort();
  });
  try {
    return await work(controller.signal);
  } catch (err) {
    if (controller.signal.aborted) throw new Interrupted(stopped());
    throw err;
  } finally {
    stopListening?.();
  }
}

/**
 * The lines of `lines` until `signal` is aborted, then the signal's reason: an import waiting
 * for its next line (a slow pipe, a terminal) stops as soon as Ctrl-C comes.
 */
export async function* untilAborted<T>(
  lines: AsyncIterable<T>,
  signal: AbortSignal,
): AsyncGenerator<T> {
  const iterator = lines[Symbol.asyncIterator]();
  const aborted = new Promise<never>((_, reject) => {
    const stop = () => reject(signal.reason);
    if (signal.aborted) stop();
    else signal.addEventListener('abort', stop, { once: true });
  });
  // Nobody may await it when the lines end first.
  aborted.catch(() => {});
  try {
    for (;;) {
      const next = await Promise.race([iterator.next(), aborted]);
      if (next.done) return;
      yield next.value;
    }
  } finally {
    await iterator.return?.();
  }
}
