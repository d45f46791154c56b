/**
 * Group commit: the mutations (of any sessions) that are waiting at the same moment commit
 * together, in one BEGIN IMMEDIATE … COMMIT and so one fsync, each in a savepoint of its own.
 * better-sqlite3 is synchronous, so "waiting at the same moment" means called in the same turn
 * of the event loop: many agents whose last steps ended together (their promises settled after
 * one commit) call again together, before the microtasks of that commit have run out. A call that refuses (a conflict, an idempotent replay) or
 * throws undoes only its own savepoint; a failed COMMIT fails every call of the batch, and
 * none of them is stored. A call's promise settles only after the COMMIT that holds it.
 */
import type Database from 'better-sqlite3';

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

interface Waiting {
  /** The call inside an open transaction: a savepoint. */
  run: () => unknown;
  /** The call alone: its own BEGIN IMMEDIATE … COMMIT. */
  alone: () => unknown;
  resolve: (value: never) => void;
  reject: (err: unknown) => void;
}

/** A failure that ended the transaction a batch was in: every call of the batch fails. */
class BatchEnded extends Error {
  constructor(readonly failure: unknown) {
    super('the batch transaction ended');
  }
}

/** Runs a database's write transactions in groups. */
export class GroupCommit {
  readonly #db: Database.Database;
  readonly #limits: GroupCommitLimits;
  readonly #inOne: Database.Transaction<(batch: Waiting[]) => unknown[]>;
  #waiting: Waiting[] = [];
  #bytes = 0;
  #scheduled = false;

  constructor(db: Database.Database, limits: GroupCommitLimits = DEFAULT_GROUP_LIMITS) {
    this.#db = db;
    this.#limits = limits;
    // Each call's own db.transaction() runs nested, as a savepoint, inside this one.
    this.#inOne = db.transaction((batch: Waiting[]) =>
      batch.map((call) => {
        try {
          return { value: call.run() };
        } catch (err) {
          // Some errors (a full disk, an I/O error) end the whole transaction, and with it the
          // savepoints of the calls before: then none of the batch may be reported stored.
          if (!this.#db.inTransaction) throw new BatchEnded(err);
          return { error: err };
        }
      }),
    );
  }

  /** Run `transaction` (a better-sqlite3 transaction function) with the next group. */
  run<A extends unknown[], T>(
    transaction: Database.Transaction<(...args: A) => T>,
    args: A,
    bytes: number,
  ): Promise<T> {
    return new Promise<T>((resolve, reject) => {
      this.#waiting.push({
        run: () => transaction(...args),
        alone: () => transaction.immediate(...args),
        resolve: resolve as (value: never) => void,
        reject,
      });
      this.#bytes += bytes;
      if (this.#waiting.length >= this.#limits.maxCalls || this.#bytes >= this.#limits.maxBytes) {
        this.#flush();
      } else if (!this.#scheduled) {
        this.#scheduled = true;
        // Two microtasks on: agents whose last calls settled together resume together, each
        // through the same few awaits, so their next calls all arrive before this runs; a
        // caller alone waits no more than those two hops.
        queueMicrotask(() =>
          queueMicrotask(() => {
            this.#scheduled = false;
            this.#flush();
          }),
        );
      }
    });
  }

  #flush(): void {
    const batch = this.#waiting;
    this.#waiting = [];
    this.#bytes = 0;
    if (batch.length === 0) return;
    if (batch.length === 1) {
      // Alone: its own transaction, without a savepoint inside it.
      const [call] = batch as [Waiting];
      try {
        call.resolve(call.alone() as never);
      } catch (err) {
        call.reject(err);
      }
      return;
    }
    let outcomes: { value?: unknown; error?: unknown }[];
    try {
      outcomes = this.#inOne.immediate(batch) as typeof outcomes;
    } catch (err) {
      const failure = err instanceof BatchEnded ? err.failure : err;
      for (const call of batch) call.reject(failure);
      return;
    }
    for (const [i, call] of batch.entries()) {
      const outcome = outcomes[i]!;
      if ('error' in outcome) call.reject(outcome.error);
      else call.resolve(outcome.value as never);
    }
  }
}
