/**
 * `store.watch()`: the changes of every process writing to the store, from its change log, as an
 * async iterable. A watcher takes what the store's one tail read (see change-tail.ts) and reads
 * the log itself only while it is further behind than the tail keeps: when it starts from an old
 * cursor, or its consumer was slow. It never skips a change: where the log no longer holds what
 * followed its position, it fails with EXPIRED, and the caller reloads.
 */
import type { ChangeKind, ChangesPage, CompleteBackend, StoredChange } from '../adapter/backend.js';
import { CkptError, invalidArgument, isCkptError, unsupported } from '../values/errors.js';
import { checkName, checkOptions, checkSignal, describe } from '../values/validate.js';
import { CHANGES_PAGE, type ChangeTail } from './change-tail.js';

/** What `watch()` follows. */
export interface WatchOptions {
  /** Only this session's changes. */
  sessionId?: string;
  /** Only the changes of sessions (and state scopes) whose id starts with this. */
  prefix?: string;
  /** Go on after this event (its `cursor`): what changed meanwhile comes first. */
  since?: string;
  /** Ends the iteration once aborted. */
  signal?: AbortSignal;
}

/** One change, as `watch()` gives it. */
export interface ChangeEvent {
  /** The session that changed; for `state`, the state scope. */
  sessionId: string;
  kind: ChangeKind;
  /** The session's head after the change, where there is one (not after a delete, nor for state). */
  seq?: number;
  /** Pass as `since` to go on after this event. */
  cursor: string;
}

/** The iterable `watch()` returns. */
export interface ChangeStream extends AsyncIterable<ChangeEvent> {
  /**
   * Resolves once the watcher holds its place in the log: every change committed after it
   * resolves is among what the iteration gives. Rejects as the iteration would (UNSUPPORTED,
   * an invalid `since`, a failed read).
   */
  readonly ready: Promise<void>;
}

/** The longest cursor a backend makes, far above any; a longer `since` is not one. */
const MAX_CURSOR = 1_000;

/** Check `watch()`'s options: everything it would refuse, refused at the call. */
export function checkWatchOptions(options: WatchOptions | undefined) {
  const opts = checkOptions(
    options,
    'options',
    ['sessionId', 'prefix', 'since', 'signal'],
    'watch()',
  );
  const sessionId =
    opts.sessionId === undefined ? undefined : checkName(opts.sessionId, 'sessionId');
  const prefix =
    opts.prefix === undefined || opts.prefix === '' ? '' : checkName(opts.prefix, 'prefix');
  if (
    opts.since !== undefined &&
    (typeof opts.since !== 'string' || opts.since === '' || opts.since.length > MAX_CURSOR)
  ) {
    throw invalidArgument(
      'since',
      `since must be the cursor of an event watch() gave, got ${describe(opts.since)}.`,
    );
  }
  return { sessionId, prefix, since: opts.since, signal: checkSignal(opts.signal, 'signal') };
}

/** Whether `change` is one the watcher asked for. */
function wanted(change: StoredChange, sessionId: string | undefined, prefix: string): boolean {
  if (sessionId !== undefined && change.sessionId !== sessionId) return false;
  return change.sessionId.startsWith(prefix);
}

function toEvent(change: StoredChange): ChangeEvent {
  const event: ChangeEvent = {
    sessionId: change.sessionId,
    kind: change.kind,
    cursor: change.position,
  };
  if (change.seq !== null) event.seq = change.seq;
  return event;
}

function expired(since: string): CkptError {
  return new CkptError(
    'EXPIRED',
    `the change log no longer holds what followed cursor ${JSON.stringify(since)}: changes since then may be missed; reload what you show and watch again without since.`,
    { details: { argument: 'since' } },
  );
}

/** What the store gives `watch()`: its backend, its one tail, and how to read under its rules. */
export interface WatchContext {
  backend: CompleteBackend;
  tail: ChangeTail;
  /** Run a read as a call of the store: refused after close, a driver failure as BACKEND. */
  run<T>(fn: () => Promise<T>): Promise<T>;
}

/**
 * The changes `options` asks for, as they commit, until the signal aborts, the iteration is
 * closed, or the store is.
 */
export function watchChanges(context: WatchContext, options?: WatchOptions): ChangeStream {
  const { sessionId, prefix, since, signal: given } = checkWatchOptions(options);
  const { backend, tail, run } = context;
  if (typeof backend.changes !== 'function') {
    throw unsupported(backend.name, 'watch()', 'watch');
  }
  // Ends the waits of this watcher alone: its signal, or its iteration closed.
  const ended = new AbortController();
  let joined = false;
  const release = () => {
    given?.removeEventListener('abort', release);
    ended.abort();
    if (joined) {
      joined = false;
      tail.leave();
    }
  };
  given?.addEventListener('abort', release, { once: true });
  // The place is taken now, not at the first next(): changes right after the call are kept.
  // A cursor is read once at the start, so that one the log did not make, or no longer holds,
  // fails there (and `ready` with it) rather than waiting for a change that never comes.
  const start: Promise<string> = (async () => {
    joined = true;
    const end = await tail.join();
    if (since === undefined) return end;
    const checked = await run(() => backend.changes!({ after: since, limit: 0 }));
    if (checked === 'expired') throw expired(since);
    return since;
  })();
  // A watcher that cannot start (a cursor refused or expired) holds nothing: it is released
  // here, since a loop over it may never begin.
  start.catch(() => release());

  async function* iterate(): AsyncGenerator<ChangeEvent> {
    try {
      let position = await start;
      for (;;) {
        if (ended.signal.aborted || tail.stopped) return;
        let page = tail.after(position);
        if (page === null) {
          const read = await readOwn(run, backend, position, ended.signal);
          if (read === 'closed') return;
          if (read === 'expired') throw expired(position);
          page = read;
        }
        for (const change of page.changes) {
          if (ended.signal.aborted || tail.stopped) return;
          position = change.position;
          if (wanted(change, sessionId, prefix)) yield toEvent(change);
        }
        const caughtUp = page.position === position || page.changes.length < CHANGES_PAGE;
        if (page.position > position) position = page.position;
        if (caughtUp) await tail.wait(position, ended.signal);
      }
    } finally {
      release();
    }
  }

  const generator = iterate();
  if (given?.aborted) release();
  // A generator closed before its first next() never runs its finally: release here too.
  const iterator: AsyncIterator<ChangeEvent> = {
    next: () => generator.next(),
    return: (value?: unknown) => {
      release();
      return generator.return(value as never);
    },
  };
  return {
    ready: start.then(() => undefined),
    [Symbol.asyncIterator]: () => iterator,
  };
}

/** A page of the log read by the watcher itself; a failed read of the server is tried again. */
async function readOwn(
  run: WatchContext['run'],
  backend: CompleteBackend,
  after: string,
  signal: AbortSignal,
): Promise<ChangesPage | 'expired' | 'closed'> {
  for (let attempt = 0; !signal.aborted; attempt++) {
    try {
      return await run(() => backend.changes!({ after, limit: CHANGES_PAGE }));
    } catch (err) {
      // close() ends a watcher; it does not fail it.
      if (isCkptError(err, 'CLOSED')) return 'closed';
      if (!isCkptError(err, 'BACKEND')) throw err;
      await new Promise((resolve) => setTimeout(resolve, Math.min(100 * 2 ** attempt, 2_000)));
    }
  }
  return 'closed';
}
