/**
 * Calls that would wait for a pool's connection go together. While every connection of the
 * pool is busy, a call joins a queue; the first free connection takes the whole queue (up to
 * a bound) and sends it as one statement, one round trip and one transaction, with an outcome
 * for each call. With a free connection, or with the queue empty and the pool idle, a call
 * goes alone at once: a caller is never delayed to make a batch.
 */

/**
 * One call's outcome in a batch: its value, the error that refused it alone, or AGAIN: the
 * batch left it undone (it wrote nothing of it), and it goes alone.
 */
export type BatchOutcome<O> = { value: O } | { error: unknown } | typeof AGAIN;

/** The outcome of a call that the batch left undone: it goes again, alone. */
export const AGAIN = { again: true } as const;

/** A connection leased for one batch. */
export interface BatchLease<I, O> {
  /**
   * Send `inputs` together, in one round trip and one transaction: one outcome each, in order.
   * Rejects when the transaction failed as a whole (a failed commit, a broken connection),
   * which fails every call of the batch.
   */
  together(inputs: I[]): Promise<BatchOutcome<O>[]>;
  /** Give the connection back; `err` when it failed, so that the pool drops it. */
  release(err?: unknown): void;
}

/** What a pool offers to batch one kind of call. */
export interface BatchPool<I, O> {
  /** Whether a call sent now would wait for a connection. */
  busy(): boolean;
  /** Send one call by itself, as it goes without batching. */
  alone(input: I): Promise<O>;
  /** A connection, once one is free. */
  lease(): Promise<BatchLease<I, O>>;
}

/** Bounds of one batch. */
export interface BatchLimits {
  /** Most calls in one batch. */
  maxCalls: number;
  /** Most payload bytes (as the callers count them) in one batch. */
  maxBytes: number;
}

/** The bounds the SQL backends use: 64 calls, 16 MiB. */
export const DEFAULT_BATCH_LIMITS: BatchLimits = { maxCalls: 64, maxBytes: 16 * 1024 * 1024 };

interface Waiting<I, O> {
  input: I;
  bytes: number;
  resolve: (value: O) => void;
  reject: (err: unknown) => void;
}

/** Batches calls to `pool` while its connections are all busy (see the file's comment). */
export class BusyPoolBatches<I, O> {
  readonly #pool: BatchPool<I, O>;
  readonly #limits: BatchLimits;
  #queue: Waiting<I, O>[] = [];
  /** Whether a lease is being waited for; the queue goes to it once it comes. */
  #leasing = false;
  /** How many batches were sent, and the calls they carried. */
  readonly sent = { batches: 0, calls: 0 };

  constructor(pool: BatchPool<I, O>, limits: BatchLimits = DEFAULT_BATCH_LIMITS) {
    this.#pool = pool;
    this.#limits = limits;
  }

  /** Run `input` (of `bytes` payload), alone or in the next batch. */
  run(input: I, bytes: number): Promise<O> {
    if (this.#queue.length === 0 && !this.#pool.busy()) return this.#pool.alone(input);
    return new Promise<O>((resolve, reject) => {
      this.#queue.push({ input, bytes, resolve, reject });
      if (!this.#leasing) void this.#next();
    });
  }

  /** Wait for a connection, then send what is queued by then on it. */
  async #next(): Promise<void> {
    this.#leasing = true;
    let lease: BatchLease<I, O>;
    try {
      lease = await this.#pool.lease();
    } catch (err) {
      this.#leasing = false;
      for (const call of this.#take()) call.reject(err);
      if (this.#queue.length > 0) void this.#next();
      return;
    }
    this.#leasing = false;
    const batch = this.#take();
    this.sent.batches++;
    this.sent.calls += batch.length;
    // Calls beyond the bound wait for the next connection.
    if (this.#queue.length > 0) void this.#next();
    let outcomes: BatchOutcome<O>[];
    try {
      outcomes = await lease.together(batch.map((call) => call.input));
      lease.release();
    } catch (err) {
      lease.release(err);
      for (const call of batch) call.reject(err);
      return;
    }
    for (const [i, call] of batch.entries()) {
      const outcome = outcomes[i]!;
      if ('value' in outcome) call.resolve(outcome.value);
      else if ('error' in outcome) call.reject(outcome.error);
      else this.#pool.alone(call.input).then(call.resolve, call.reject);
    }
  }

  /** The queue's first calls, within the bounds (at least one). */
  #take(): Waiting<I, O>[] {
    let bytes = 0;
    let n = 0;
    while (n < this.#queue.length && n < this.#limits.maxCalls) {
      bytes += this.#queue[n]!.bytes;
      if (n > 0 && bytes > this.#limits.maxBytes) break;
      n++;
    }
    return this.#queue.splice(0, n);
  }
}
