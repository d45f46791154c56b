/**
 * Fault runs: checkpoint calls whose connection is cut at a random byte, each resolved by
 * retrying with the same idempotency key. Afterwards every call must be stored exactly once.
 */
import type { CheckpointStore } from '@ckpt/core';
import { expect } from 'vitest';
import type { Direction, FaultProxy } from './fault-proxy.js';
import { allPages } from './util.js';

/** What the fault runs found. */
export interface FaultReport {
  runs: number;
  /** Runs in which a call failed because of the cut. */
  failedFirst: number;
  /** Cuts that happened: one each run. */
  cuts: number;
  /**
   * Runs made besides these, whose armed cut never fired (they moved fewer bytes that way than
   * the one measured); each is checked like a run, and another run made in its place.
   */
  uncut: number;
  /** Failed calls that had committed anyway (their reply was cut): the retry replayed them. */
  committedBeforeCut: number;
  /** Calls stored zero times, and more than once. */
  lost: number;
  duplicated: number;
  /** Whether the head named a stored checkpoint and every seq was distinct. */
  consistent: boolean;
}

/**
 * Make checkpoints on `store` (which must reach its server through `proxy`), cutting each
 * run's connection at a random byte in alternating directions, then retrying each failed call
 * with the same idempotency key until it succeeds, until `runs` runs have been cut. A run is
 * `concurrency` calls made at once (default 1): where a backend sends calls that wait for a
 * connection together, a cut then falls on a batch of them as often as on a call alone.
 */
export async function runFaultInjection(options: {
  store: CheckpointStore;
  proxy: FaultProxy;
  runs: number;
  sessionId?: string;
  /** Calls made at once in each run (default 1). */
  concurrency?: number;
  /** Retries of one call before giving up (default 20). */
  retries?: number;
}): Promise<FaultReport> {
  const { store, proxy, runs } = options;
  const sessionId = options.sessionId ?? `faults-${Date.now()}`;
  const width = options.concurrency ?? 1;
  // Every call sends the same number of bytes, so that a cut armed inside the size measured
  // below falls inside each run (replies only grow, as seqs gain digits).
  const tag = (call: number) => String(call).padStart(6, '0');
  const write = (call: number) =>
    store.checkpoint(
      sessionId,
      { run: tag(call), padding: 'p'.repeat(1500) },
      { idempotencyKey: `run-${tag(call)}`, transcript: [`item ${tag(call)}`] },
    );
  // The calls of run `run` (negative runs warm up), all at once; true for each that succeeded.
  const callsOf = (run: number) => Array.from({ length: width }, (_, i) => run * width + i);
  const attempt = (run: number) =>
    Promise.all(
      callsOf(run).map((call) =>
        write(call).then(
          () => true,
          () => false,
        ),
      ),
    );

  // Warm the connections, then measure how many bytes one run moves each way.
  await Promise.all(callsOf(-2).map(write));
  proxy.resetCounts();
  await Promise.all(callsOf(-1).map(write));
  const size: Record<Direction, number> = { ...proxy.counts };

  let failedFirst = 0;
  let cuts = 0;
  let committedBeforeCut = 0;
  let made = 0;
  for (; cuts < runs; made++) {
    if (made >= 2 * runs) throw new Error(`only ${cuts} of ${made} fault runs cut their call`);
    const direction: Direction = made % 2 === 0 ? 'toClient' : 'toServer';
    proxy.cutAfter(Math.floor(Math.random() * size[direction]), direction);
    const run = made;
    const first = await attempt(run);
    if (proxy.fired) cuts++;
    proxy.disarm();
    const failed = callsOf(run).filter((_, i) => !first[i]);
    if (failed.length === 0) continue;
    failedFirst++;
    const retriedAt = Date.now();
    await Promise.all(
      failed.map(async (call) => {
        for (let tried = 1; ; tried++) {
          const ok = await write(call).then(
            (cp) => {
              // Written before the retry began: the first call committed and only its reply was lost.
              if (cp.createdAt.getTime() < retriedAt) committedBeforeCut++;
              return true;
            },
            (err: unknown) => {
              if (tried >= (options.retries ?? 20)) throw err;
              return false;
            },
          );
          if (ok) return;
          await new Promise((resolve) => setTimeout(resolve, 10 * tried));
        }
      }),
    );
  }
  const calls = made * width;

  const infos = await allPages((page) => store.list(sessionId, page), 1000, runs * width * 4);
  const stored = new Map<string, number>();
  for (const info of infos) {
    const loaded = await store.load(sessionId, info.seq);
    const run = String((loaded?.data as { run: string } | undefined)?.run);
    stored.set(run, (stored.get(run) ?? 0) + 1);
  }
  let lost = 0;
  let duplicated = 0;
  for (let call = 0; call < calls; call++) {
    const count = stored.get(tag(call)) ?? 0;
    if (count === 0) lost++;
    if (count > 1) duplicated++;
  }
  const info = await store.info(sessionId);
  const consistent =
    info !== null &&
    (await store.load(sessionId, info.head)) !== null &&
    new Set(infos.map((i) => i.seq)).size === infos.length &&
    info.checkpoints === infos.length;
  return {
    runs,
    failedFirst,
    cuts,
    uncut: made - runs,
    committedBeforeCut,
    lost,
    duplicated,
    consistent,
  };
}

/**
 * Expect fault runs to have done their job: every run was cut, some calls after the server had
 * committed (so the retry had to replay), and yet every call is stored exactly once.
 */
export function expectEveryRunStoredOnce(report: FaultReport): void {
  expect(report).toMatchObject({ lost: 0, duplicated: 0, consistent: true });
  expect(report.cuts).toBe(report.runs);
  expect(report.failedFirst).toBeGreaterThan(report.runs / 4);
  // Some cuts fell between the commit and its reply, and the retry found the checkpoint.
  expect(report.committedBeforeCut).toBeGreaterThan(0);
}
