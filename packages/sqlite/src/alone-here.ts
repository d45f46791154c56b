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

/**
 * Commit on the thread, but a call alone here when the thread is idle and `quiet()` says no
 * other caller is about to call (see above).
 */
export function aloneHere(
  db: Database.Database,
  thread: WriterThread,
  here: () => (calls: WriteCall[]) => Outcome[],
  quiet: () => boolean,
): CommitBatch {
  let local: ((calls: WriteCall[]) => Outcome[]) | undefined;
  const wait = busyTimeouts(db);
  return (calls) => {
    if (calls.length !== 1 || !thread.idle || !quiet()) return thread.commit(calls);
    local ??= here();
    const commit = local;
    const outcomes = wait.never(() => commit(calls));
    const [outcome] = outcomes as [Outcome];
    // BEGIN IMMEDIATE found the file locked: nothing was written, and the thread waits for it.
    if ('error' in outcome && errorCode(outcome.error).startsWith('SQLITE_BUSY')) {
      return thread.commit(calls);
    }
    // Answered a turn of the event loop later, as the thread's answer would be: a loop of
    // writes (a sweep, a rewrite) leaves timers, I/O and Ctrl-C their turn between them.
    return new Promise((resolve) => setImmediate(() => resolve(outcomes)));
  };
}

/**
 * Runs a function on `db` with a busy timeout of 0, so that a locked file fails at once with
 * SQLITE_BUSY, and the usual timeout after. The two statements are prepared once: `pragma()`
 * prepares its statement on every call, which cost more than the rest of a small write.
 */
function busyTimeouts(db: Database.Database): { never<T>(fn: () => T): T } {
  let statements: { none: Database.Statement; usual: Database.Statement } | undefined;
  return {
    never(fn) {
      statements ??= {
        none: db.prepare('PRAGMA busy_timeout = 0'),
        usual: db.prepare(`PRAGMA busy_timeout = ${BUSY_TIMEOUT_MS}`),
      };
      statements.none.run();
      try {
        return fn();
      } finally {
        statements.usual.run();
      }
    },
  };
}
