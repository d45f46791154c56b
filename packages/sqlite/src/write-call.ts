/**
 * A write as data: the name of one of a connection's write transactions and its arguments, so
 * that it can be run on the event loop's connection or posted to the writer thread alike, and
 * the committing of a batch of them on one connection: a call alone in a transaction of its
 * own, several in one BEGIN IMMEDIATE … COMMIT, each in a savepoint.
 */
import type Database from 'better-sqlite3';

/** A call of the write transaction `name` with `args`. */
export interface WriteCall {
  name: string;
  args: unknown[];
}

/** What a call gave: its value, or what it threw. */
export type Outcome = { value: unknown } | { error: unknown };

/** A connection's write transactions by name, as better-sqlite3 builds them. */
// biome-ignore lint/suspicious/noExplicitAny: each transaction takes arguments of its own
export type Transactions = Record<string, Database.Transaction<(...args: any[]) => unknown>>;

/** A failure that ended the transaction a batch was in: every call of the batch fails. */
class BatchEnded extends Error {
  constructor(readonly failure: unknown) {
    super('the batch transaction ended');
  }
}

/** Commits batches of calls of `transactions` on `db`, one outcome a call, in order. */
export function batchCommitter(
  db: Database.Database,
  transactions: Transactions,
): (calls: WriteCall[]) => Outcome[] {
  const transaction = (name: string) => {
    const found = transactions[name];
    if (!found) throw new Error(`no write transaction named ${JSON.stringify(name)}`);
    return found;
  };
  // Each call's own db.transaction() runs nested, as a savepoint, inside this one.
  const inOne = db.transaction((calls: WriteCall[]): Outcome[] =>
    calls.map((call) => {
      try {
        return { value: transaction(call.name)(...call.args) };
      } catch (err) {
        // Some errors (a full disk, an I/O error) end the whole transaction, and with it the
        // savepoints of the calls before: then none of the batch may be reported stored.
        if (!db.inTransaction) throw new BatchEnded(err);
        return { error: err };
      }
    }),
  );
  return (calls) => {
    if (calls.length === 1) {
      // Alone: its own transaction, without a savepoint inside it.
      const [call] = calls as [WriteCall];
      try {
        return [{ value: transaction(call.name).immediate(...call.args) }];
      } catch (err) {
        return [{ error: err }];
      }
    }
    try {
      return inOne.immediate(calls);
    } catch (err) {
      const failure = err instanceof BatchEnded ? err.failure : err;
      return calls.map(() => ({ error: failure }));
    }
  };
}
