/**
 * Group commit: the mutations (of any sessions) that are waiting at the same moment commit
 * together, in one BEGIN IMMEDIATE … COMMIT and so one fsync, each in a savepoint of its own.
 * Waiting at the same moment means called in the same turn of the event loop (many agents whose
 * last steps ended together call again together, before the microtasks of that commit have
 * run out), or, where the commits run on the writer thread, called while it was committing the
 * batch before. A call that refuses (a conflict, an idempotent replay) or throws undoes only
 * its own savepoint; a failed COMMIT fails every call of the batch, and none of them is
 * stored. A call's promise settles only after the COMMIT that holds it.
 */
import type { Outcome, WriteCall } from './write-call.js';

/** Bounds of one batch. */
export interface GroupCommitLimits {
  /** Most calls in one transaction. */
  maxCalls: number;
  /** Most payload bytes (as the callers count them) in one transaction. */
  maxBytes: number;
}

export const DEFAULT_GROUP_LIMITS: GroupCommitLimits = {
  maxCalls: 256,
  maxBytes: 16 * 1024 * 1024,
};

/**
 * How many of a batch's callers resume in one turn of the event loop, where a batch commits
 * off it: the loop turns between, so that no turn carries the work of a whole batch of
 * callers. The calls they make go in the next batch as soon as the thread is free, so that
 * the thread commits while the event loop works for the callers still resuming.
 */
const RESUMED_A_TURN = 8;

/**
 * Commit a batch of calls in one transaction, each call's outcome in its place: at once on the
 * event loop's connection, or as a promise from the writer thread.
 */
export type CommitBatch = (calls: WriteCall[]) => Outcome[] | Promise<Outcome[]>;

interface Waiting {
  call: WriteCall;
  bytes: number;
  resolve: (value: never) => void;
  reject: (err: unknown) => void;
}

/** Gathers write calls into batches and hands each to `commit`, one batch at a time. */
export class GroupCommit {
  readonly #commit: CommitBatch;
  readonly #limits: GroupCommitLimits;
  #waiting: Waiting[] = [];
  #bytes = 0;
  #scheduled = false;
  /** A batch handed to a commit that has not answered yet: the next waits for it. */
  #committing = false;
  /** Who waits for every call handed in to settle (see idle()). */
  #whenIdle: (() => void)[] = [];
  /** Committed batches whose callers are resuming, over a few turns each. */
  #resuming = 0;

  constructor(commit: CommitBatch, limits: GroupCommitLimits = DEFAULT_GROUP_LIMITS) {
    this.#commit = commit;
    this.#limits = limits;
  }

  /** Run `call` with the next group; `bytes` is its payload's size. */
  run<T>(call: WriteCall, bytes: number): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({ call, bytes, resolve: resolve as (value: never) => void, reject });
      this.#bytes += bytes;
      if (this.#busy()) return;
      if (this.#waiting.length >= this.#limits.maxCalls || this.#bytes >= this.#limits.maxBytes) {
        this.#flush();
      } else {
        this.#schedule();
      }
    });
  }

  /** Resolves once every call handed in so far has settled: for a close that waits for them. */
  idle(): Promise<void> {
    if (this.#isIdle()) return Promise.resolve();
    return new Promise((resolve) => this.#whenIdle.push(resolve));
  }

  /**
   * Whether no caller is about to call: none resuming from a commit, none waiting. A call alone
   * then is one agent's, which may commit where it is cheapest (see aloneHere).
   */
  get quiet(): boolean {
    return this.#resuming === 0 && this.#waiting.length === 0;
  }

  #isIdle(): boolean {
    return this.#waiting.length === 0 && !this.#committing && this.#resuming === 0;
  }

  /** A batch is committing: the next one waits for it. */
  #busy(): boolean {
    return this.#committing;
  }

  #schedule(): void {
    if (this.#scheduled) return;
    this.#scheduled = true;
    // Two microtasks on: agents whose last calls settled together resume together, each
    // through the same few awaits, so their next calls all arrive before this runs; a caller
    // alone waits no more than those two hops.
    queueMicrotask(() =>
      queueMicrotask(() => {
        this.#scheduled = false;
        if (!this.#busy()) this.#flush();
      }),
    );
  }

  /** The calls waiting, up to a batch's limits. */
  #take(): Waiting[] {
    let count = 0;
    let bytes = 0;
    while (
      count < this.#waiting.length &&
      count < this.#limits.maxCalls &&
      (count === 0 || bytes + this.#waiting[count]!.bytes <= this.#limits.maxBytes)
    ) {
      bytes += this.#waiting[count]!.bytes;
      count++;
    }
    const batch = this.#waiting.splice(0, count);
    this.#bytes -= bytes;
    return batch;
  }

  #flush(): void {
    const batch = this.#take();
    if (batch.length === 0) return;
    let outcomes: Outcome[] | Promise<Outcome[]>;
    try {
      outcomes = this.#commit(batch.map((waiting) => waiting.call));
    } catch (err) {
      for (const waiting of batch) waiting.reject(err);
      this.#next();
      return;
    }
    if (Array.isArray(outcomes)) {
      settle(batch, outcomes);
      this.#next();
      return;
    }
    this.#committing = true;
    const committed = (done: Outcome[]) => {
      this.#committing = false;
      this.#resume(batch, done);
      // The calls that waited for this commit go next, while its callers resume: the commit
      // runs off the event loop, so the two overlap.
      if (this.#waiting.length > 0) this.#schedule();
    };
    outcomes.then(committed, (err) => committed(batch.map(() => ({ error: err }))));
  }

  /**
   * Settle a committed batch's calls, RESUMED_A_TURN of them a turn of the event loop; the
   * next batch waits for the turn after the last, by when the calls its callers make at once
   * have all arrived.
   */
  #resume(batch: Waiting[], outcomes: Outcome[]): void {
    this.#resuming++;
    const turn = () => {
      settle(batch.splice(0, RESUMED_A_TURN), outcomes.splice(0, RESUMED_A_TURN));
      if (batch.length > 0) {
        setImmediate(turn);
        return;
      }
      // The last callers are resuming: none is left to wait for (see quiet). Idle, if it
      // comes to that, is decided a turn later, once the calls they make have arrived.
      this.#resuming--;
      setImmediate(() => this.#next());
    };
    turn();
  }

  /** The calls that arrived meanwhile go next, with those the resumed callers make. */
  #next(): void {
    if (this.#busy()) return;
    if (this.#waiting.length > 0) {
      this.#schedule();
      return;
    }
    if (!this.#isIdle()) return;
    const waiters = this.#whenIdle;
    this.#whenIdle = [];
    for (const resolve of waiters) resolve();
  }
}

function settle(batch: Waiting[], outcomes: Outcome[]): void {
  for (const [i, waiting] of batch.entries()) {
    const outcome = outcomes[i]!;
    if ('error' in outcome) waiting.reject(outcome.error);
    else waiting.resolve(outcome.value as never);
  }
}
