/**
 * A store under load while its server drops its connections: writers that make checkpoints
 * without pause, and the test's faults (its store's connections killed from the server's
 * side, a restart) made in turn while they write, each once the writers have got calls
 * through since the one before. Half the writers give each call an idempotency key and retry
 * a failed call with it until it succeeds; the others give none and go on after a failure,
 * whose call may or may not have run, so that a call the driver sent again by itself after
 * the connection went is seen stored twice. Then what the store must have done: the process
 * met no uncaught exception (a driver's 'error' event with no listener would be one, and
 * would end an application), every failed call was a BACKEND error that says to retry, every
 * call that succeeded is stored once, and none twice.
 */
import { EventEmitter, once } from 'node:events';
import { allPages } from '@ckpt/contract-tests';
import { type CheckpointStore, isCkptError } from '@ckpt/core';
import { SERVER_HINTS } from '@ckpt/core/adapter';
import { expect } from 'vitest';

/** What a run of `writeWhileDropping` found. */
export interface DroppedConnectionsReport {
  /** Faults made. */
  faults: number;
  /** Checkpoint calls made. */
  calls: number;
  /** Every failed attempt, first tries and retries. */
  failures: unknown[];
  /** Uncaught exceptions and unhandled rejections the process met while the writers ran. */
  uncaught: unknown[];
  /** Calls that succeeded (after retries) and are not stored, and calls stored more than once. */
  lost: number;
  duplicated: number;
}

// Attempts of one call before the run gives up on the store: enough to outlast a restart.
const ATTEMPTS = 200;

/**
 * Run `writers` writers on `store`, each on a session of its own, and make each of `faults` in
 * turn once they have got `callsBetween` calls through (default: one a writer) since the last;
 * then read every session back. A call with a key that keeps failing fails the run.
 */
export async function writeWhileDropping(options: {
  store: CheckpointStore;
  writers: number;
  faults: (() => Promise<unknown>)[];
  callsBetween?: number;
}): Promise<DroppedConnectionsReport> {
  const { store, writers, faults } = options;
  const between = options.callsBetween ?? writers;
  const session = (writer: number) => `writer-${writer}`;
  const keyed = (writer: number) => writer % 2 === 0;
  const made = new Array<number>(writers).fill(0);
  /** By writer, the calls that succeeded. */
  const succeeded = Array.from({ length: writers }, () => new Set<number>());
  const failures: unknown[] = [];
  const uncaught: unknown[] = [];
  const record = (err: unknown) => uncaught.push(err);
  const progress = new EventEmitter();
  let acknowledged = 0;
  let stop = false;

  /** Call `n` of `writer`; with a key, again until it succeeds. */
  const call = async (writer: number, n: number) => {
    const key = keyed(writer) ? { idempotencyKey: `call-${n}` } : {};
    for (let attempt = 1; ; attempt++) {
      try {
        await store.checkpoint(session(writer), { n }, { ...key, metadata: { n } });
        succeeded[writer]!.add(n);
        acknowledged++;
        progress.emit('call');
        return;
      } catch (err) {
        failures.push(err);
        if (!keyed(writer)) return;
        if (attempt === ATTEMPTS) throw err;
        // While a restarted server is down, a retry at once would only fail again.
        await new Promise((resolve) => setTimeout(resolve, Math.min(5 * attempt, 100)));
      }
    }
  };
  const writer = async (w: number) => {
    while (!stop) await call(w, made[w]!++);
  };
  /** Resolves once `count` more calls have gone through. */
  const callsThrough = async (count: number) => {
    const target = acknowledged + count;
    while (acknowledged < target) await once(progress, 'call');
  };

  process.on('uncaughtException', record);
  process.on('unhandledRejection', record);
  const running = Promise.all(Array.from({ length: writers }, (_, w) => writer(w)));
  try {
    // A writer that gives up ends the run at once, with its error.
    await Promise.race([
      running,
      (async () => {
        for (const fault of faults) {
          await callsThrough(between);
          await fault();
        }
        await callsThrough(between);
      })(),
    ]);
  } finally {
    stop = true;
    await running.catch(() => {});
    process.off('uncaughtException', record);
    process.off('unhandledRejection', record);
  }
  await running;
  // The store works as it did: a call made now succeeds at once.
  const after = await store.checkpoint('after-faults', { n: 0 });
  expect((await store.load('after-faults', after.seq))?.data).toEqual({ n: 0 });

  let lost = 0;
  let duplicated = 0;
  for (let w = 0; w < writers; w++) {
    const infos = await allPages((page) => store.list(session(w), page), 1000, made[w]! * 2 + 10);
    const stored = new Map<unknown, number>();
    for (const info of infos) stored.set(info.metadata.n, (stored.get(info.metadata.n) ?? 0) + 1);
    for (let n = 0; n < made[w]!; n++) {
      const count = stored.get(n) ?? 0;
      if (count === 0 && succeeded[w]!.has(n)) lost++;
      if (count > 1) duplicated++;
    }
  }
  return {
    faults: faults.length,
    calls: made.reduce((a, b) => a + b, 0),
    failures,
    uncaught,
    lost,
    duplicated,
  };
}

/**
 * The run in brief, for its log: how many calls and faults, and how often each of the
 * driver's errors (its message, numbers left out) failed a call.
 */
export function summary(report: DroppedConnectionsReport) {
  const failures: Record<string, number> = {};
  for (const failure of report.failures) {
    const cause = (failure as { cause?: unknown }).cause ?? failure;
    const kind = String((cause as Error | null)?.message ?? cause).replace(/\d+/g, 'N');
    failures[kind] = (failures[kind] ?? 0) + 1;
  }
  return { faults: report.faults, calls: report.calls, failures };
}

/** What a test knows of its driver for `expectDroppedConnectionsSurvived`. */
export interface DriverWords {
  /**
   * Whether a failure's `cause` is a connection that could not be made at all (to a server
   * down for its restart), which says what to do about that instead of to retry.
   */
  notConnected?: (cause: unknown) => boolean;
  /** What the driver says of a statement sent on a connection it knows is broken. */
  brokenConnectionUsed?: string;
}

/**
 * Expect the store to have come through the run as it must: the faults failed calls, no
 * exception escaped, every call that succeeded is stored once and none twice, no statement
 * went to a connection known to be broken, and every failure is a BACKEND error that says the
 * call may or may not have run and to retry it (or, for a connection never made, ends with
 * what to do about that).
 */
export function expectDroppedConnectionsSurvived(
  report: DroppedConnectionsReport,
  driver: DriverWords = {},
): void {
  expect(report.uncaught.map(String)).toEqual([]);
  expect(report).toMatchObject({ lost: 0, duplicated: 0 });
  expect(report.failures.length).toBeGreaterThan(0);
  for (const failure of report.failures) {
    expect(isCkptError(failure, 'BACKEND'), String(failure)).toBe(true);
    const { message, cause } = failure as Error;
    if (driver.brokenConnectionUsed) expect(message).not.toContain(driver.brokenConnectionUsed);
    if (driver.notConnected?.(cause)) expect(message).toMatch(/; [^;]+\.$/);
    else expect(message).toContain(SERVER_HINTS.connectionLost);
  }
}
