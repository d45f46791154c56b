/**
 * One reader of a store's change log for all its watchers. A thousand watchers of different
 * sessions in one process cost one read of the log per change and one listening connection,
 * not a thousand: the tail reads what is new when the backend wakes it (or at its poll, a guard
 * against a lost wake) and keeps the latest changes, which each watcher takes from it. A
 * watcher further behind than what the tail keeps reads the log itself until it has caught up.
 */
import type { ChangesPage, CompleteBackend, StoredChange } from '../adapter/backend.js';

/** The changes a read of the log takes at most. */
export const CHANGES_PAGE = 500;
/** The latest changes the tail keeps for its watchers. */
const KEPT = 2_000;
/** Polls without a push (the backend's own wake-ups), and with one, as a guard. */
const POLL_MS = 100;
const GUARD_POLL_MS = 2_000;
/** How long the tail waits before reading changes that came during its last read. */
const SETTLE_MS = 20;
/** The least time between the starts of two reads. */
const MIN_GAP_MS = 2;

/** What the tail answers a watcher at `position`: what followed it, or null when it kept none of that. */
export type TailAnswer = ChangesPage | null;

export class ChangeTail {
  readonly #backend: CompleteBackend;
  /** The watchers following the tail now; it reads only while there are some. */
  #watchers = 0;
  /** The changes kept, oldest first, and the position just before the first of them. */
  #kept: StoredChange[] = [];
  #keptFrom: string | null = null;
  /** The position the tail has read through. */
  #position: string | null = null;
  #starting: Promise<string> | undefined;
  #reading: Promise<void> | undefined;
  #again = false;
  /** When the last read started (performance.now()). */
  #lastRead = Number.NEGATIVE_INFINITY;
  #timer: ReturnType<typeof setInterval> | undefined;
  #stopWakes: Promise<(() => Promise<void>) | undefined> | undefined;
  /** Watchers waiting for the tail to move past their position, and those to end at close(). */
  readonly #waiting = new Set<() => void>();
  #stopped = false;

  constructor(backend: CompleteBackend) {
    this.#backend = backend;
  }

  get stopped(): boolean {
    return this.#stopped;
  }

  /**
   * A watcher joins: the tail reads while it has any. Resolves to the log's end now, once the
   * backend's wakes are on too, so that a change committed from then on wakes the tail.
   */
  async join(): Promise<string> {
    this.#watchers++;
    if (this.#watchers === 1 && !this.#stopped) this.#listen();
    const listening = this.#stopWakes;
    if (this.#position !== null) {
      await listening;
      return this.#position;
    }
    this.#starting ??= this.#start();
    try {
      const [end] = await Promise.all([this.#starting, listening]);
      return end;
    } catch (err) {
      this.#starting = undefined;
      throw err;
    }
  }

  /** A watcher leaves; the last one stops the tail's reads and wakes. */
  leave(): void {
    this.#watchers--;
    if (this.#watchers > 0) return;
    this.#quiet();
    // The next watcher starts from the log's end then, not from where this one stopped.
    this.#kept = [];
    this.#keptFrom = null;
    this.#position = null;
    this.#starting = undefined;
  }

  /** What followed `position`, from what the tail keeps; null when it does not reach back so far. */
  after(position: string): TailAnswer {
    if (this.#position === null || this.#keptFrom === null || position < this.#keptFrom) {
      return null;
    }
    if (position >= this.#position) return { changes: [], position };
    let low = 0;
    let high = this.#kept.length;
    while (low < high) {
      const mid = (low + high) >>> 1;
      if (this.#kept[mid]!.position <= position) low = mid + 1;
      else high = mid;
    }
    return { changes: this.#kept.slice(low), position: this.#position };
  }

  /** Resolves once the tail has read past `position`, or it stops, or `signal` aborts. */
  wait(position: string, signal: AbortSignal): Promise<void> {
    if (this.#stopped || signal.aborted) return Promise.resolve();
    if (this.#position !== null && this.#position > position) return Promise.resolve();
    return new Promise((resolve) => {
      const done = () => {
        this.#waiting.delete(done);
        signal.removeEventListener('abort', done);
        resolve();
      };
      this.#waiting.add(done);
      signal.addEventListener('abort', done, { once: true });
    });
  }

  /**
   * Every watcher ends (the store is closing), and the tail stops reading and listening, also
   * for a watcher that was never iterated, which would otherwise hold them until it is.
   */
  stop(): void {
    this.#stopped = true;
    this.#quiet();
    this.#wakeWatchers();
  }

  /** Stop the poll and the backend's wakes. */
  #quiet(): void {
    clearInterval(this.#timer);
    this.#timer = undefined;
    const stopping = this.#stopWakes;
    this.#stopWakes = undefined;
    void stopping?.then((stop) => stop?.()).catch(() => {});
  }

  async #start(): Promise<string> {
    const end = await this.#backend.changes!({ after: null, limit: 0 });
    if (end === 'expired') throw new Error('a change log answered expired to a read of its end');
    if (this.#position === null && this.#watchers > 0) {
      this.#position = end.position;
      this.#keptFrom = end.position;
    }
    return end.position;
  }

  #listen(): void {
    const push = typeof this.#backend.onChanges === 'function';
    const every = this.#backend.changesPollMs ?? (push ? GUARD_POLL_MS : POLL_MS);
    // Not unref'd: a watcher waiting for changes keeps the process alive, as a listening socket
    // does; it ends at abort, at break, or at close().
    this.#timer = setInterval(() => this.#read(), every);
    if (push) {
      this.#stopWakes = this.#backend.onChanges!(() => this.#read()).catch(() => undefined);
    }
  }

  /**
   * Read what is new, one read at a time. A change after a quiet spell is read at once; the
   * changes that come during a read are read SETTLE_MS after it, together, and reads start at
   * least MIN_GAP_MS apart (a log in the process answers at once, so no read is ever in
   * flight to gather a burst): a burst of writes costs the writers a read every few
   * milliseconds, not one a write.
   */
  #read(): void {
    if (this.#reading !== undefined) {
      this.#again = true;
      return;
    }
    if (this.#position === null || this.#stopped) return;
    const wait = this.#lastRead + MIN_GAP_MS - performance.now();
    if (wait > 0) {
      this.#readAfter(wait);
      return;
    }
    this.#lastRead = performance.now();
    this.#reading = this.#readAll()
      // A failed read (the server away) is retried at the next wake or poll; the watchers wait
      // meanwhile, and miss nothing: the log still holds what came after the tail.
      .catch(() => {})
      .finally(() => {
        this.#reading = undefined;
        if (this.#again) this.#readAfter(SETTLE_MS);
      });
  }

  /** Read `ms` from now, with every change that comes meanwhile. */
  #readAfter(ms: number): void {
    this.#reading = new Promise((resolve) => setTimeout(resolve, ms)).then(() => {
      this.#reading = undefined;
      this.#again = false;
      this.#read();
    });
  }

  async #readAll(): Promise<void> {
    for (;;) {
      const from = this.#position!;
      const page = await this.#backend.changes!({ after: from, limit: CHANGES_PAGE });
      // The last watcher left meanwhile: the next one starts afresh.
      if (this.#position !== from) return;
      if (page === 'expired') {
        // The tail fell further behind than the log keeps: it goes on from the end, and each
        // watcher behind it reads the log itself, where it learns that it must reload.
        const end = await this.#backend.changes!({ after: null, limit: 0 });
        if (end === 'expired' || this.#position !== from) return;
        this.#kept = [];
        this.#keptFrom = end.position;
        this.#position = end.position;
        this.#wakeWatchers();
        return;
      }
      if (page.changes.length > 0) {
        this.#kept.push(...page.changes);
        if (this.#kept.length > KEPT) {
          const dropped = this.#kept.splice(0, this.#kept.length - KEPT);
          this.#keptFrom = dropped[dropped.length - 1]!.position;
        }
      }
      const moved = page.position !== from;
      this.#position = page.position;
      if (moved) this.#wakeWatchers();
      if (page.changes.length < CHANGES_PAGE) return;
    }
  }

  #wakeWatchers(): void {
    for (const wake of [...this.#waiting]) wake();
  }
}
