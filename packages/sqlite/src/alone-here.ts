/**
 * Where a batch commits when the writer thread is on: a call alone, while the thread holds
 * nothing, commits at once on the event loop's connection, as with `worker: false`, which
 * spares it two trips between threads (one agent, the most common case, writes so); calls that
 * overlap go to the thread, which commits them while the event loop goes on. A file another
 * process holds the write lock of is never waited on here: the call goes to the thread, which
 * waits for it off the event loop.
 */
import { errorCode } from '@ckpt/core/adapter';
import type Database from 'better-sqlite3';
import { BUSY_TIMEOUT_MS } from './connection.js';
import type { CommitBatch } from './group-commit.js';
import type { Outcome, WriteCall } from './write-call.js';
import type { WriterThread } from './writer-thread.js';

/** Commit on the thread, but a call alone here when the thread is idle (see above). */
export function aloneHere(
  db: Database.Database,
  thread: WriterThread,
  here: () => (calls: WriteCall[]) => Outcome[],
): CommitBatch {
  let local: ((calls: WriteCall[]) => Outcome[]) | undefined;
  return (calls) => {
    if (calls.length !== 1 || !thread.idle) return thread.commit(calls);
    local ??= here();
    const commit = local;
    const outcomes = withoutWaiting(db, () => commit(calls));
    const [outcome] = outcomes as [Outcome];
    // BEGIN IMMEDIATE found the file locked: nothing was written, and the thread waits for it.
    if ('error' in outcome && errorCode(outcome.error).startsWith('SQLITE_BUSY')) {
      return thread.commit(calls);
    }
    return outcomes;
  };
}

/** `fn` on `db` with a busy timeout of 0: a locked file fails at once with SQLITE_BUSY. */
function withoutWaiting<T>(db: Database.Database, fn: () => T): T {
  db.pragma('busy_timeout = 0');
  try {
    return fn();
  } finally {
    db.pragma(`busy_timeout = ${BUSY_TIMEOUT_MS}`);
  }
}
