/**
 * Fault runs: checkpoint calls whose connection is cut at a random byte, each resolved by
 * retrying with the same idempotency key. Afterwards every run must be stored exactly once.
 */
import type { CheckpointStore } from '@ckpt/core';
import { expect } from 'vitest';
import type { Direction, FaultProxy } from './fault-proxy.js';
import { allPages } from './util.js';

/** What the fault runs found. */
export interface FaultReport {
  runs: number;
  /** Runs whose first call failed because of the cut. */
  failedFirst: number;
  /** Cuts that happened: one each run. */
  cuts: number;
  /**
   * Calls made besides the runs, whose armed cut never fired (the call moved fewer bytes that
   * way than the one measured); each is checked like a run, and another run made in its place.
   */
  uncut: number;
  /** Failed first calls that had committed anyway (their reply was cut): the retry replayed them. */
  committedBeforeCut: number;
  /** Runs stored zero times, and more than once. */
  lost: number;
  duplicated: number;
  /** Whether the head named a stored checkpoint and every seq was distinct. */
  consistent: boolean;
}

/**
 * Make checkpoints on `store` (which must reach its server through `proxy`), cutting each
 * call's connection at a random byte in alternating directions, then retrying it with the same
 * idempotency key until it succeeds, until `runs` calls have been cut.
 */
export async function runFaultInjection(options: {
  store: CheckpointStore;
  proxy: FaultProxy;
  runs: number;
  sessionId?: string;
  /** Retries of one run before giving up (default 20). */
  retries?: number;
}): Promise<FaultReport> {
  const { store, proxy, runs } = options;
  const sessionId = options.sessionId ?? `faults-${Date.now()}`;
  // Every call sends the same number of bytes, so that a cut armed inside the size measured
  // below falls inside each call (replies only grow, as seqs gain digits).
  const tag = (run: number) => String(run).padStart(6, '0');
  const write = (run: number) =>
    store.checkpoint(
      sessionId,
      { run: tag(run), padding: 'p'.repeat(1500) },
      { idempotencyKey: `run-${tag(run)}`, transcript: [`item ${tag(run)}`] },
    );

  // Warm the connection, then measure how many bytes one call moves each way.
  await write(-2);
  proxy.resetCounts();
  await write(-1);
  const size: Record<Direction, number> = { ...proxy.counts };

  let failedFirst = 0;
  let cuts = 0;
  let committedBeforeCut = 0;
  let calls = 0;
  for (; cuts < runs; calls++) {
    if (calls >= 2 * runs) throw new Error(`only ${cuts} of ${calls} fault runs cut their call`);
    const direction: Direction = calls % 2 === 0 ? 'toClient' : 'toServer';
    proxy.cutAfter(Math.floor(Math.random() * size[direction]), direction);
    const run = calls;
    const first = await write(run).then(
      () => true,
      () => false,
    );
    if (proxy.fired) cuts++;
    proxy.disarm();
    if (first) continue;
    failedFirst++;
    const retriedAt = Date.now();
    for (let attempt = 1; ; attempt++) {
      const ok = await write(run).then(
        (cp) => {
          // Written before the retry began: the first call committed and only its reply was lost.
          if (cp.createdAt.getTime() < retriedAt) committedBeforeCut++;
          return true;
        },
        (err: unknown) => {
          if (attempt >= (options.retries ?? 20)) throw err;
          return false;
        },
      );
      if (ok) break;
      await new Promise((resolve) => setTimeout(resolve, 10 * attempt));
    }
  }

  const infos = await allPages((page) => store.list(sessionId, page), 1000, runs * 4);
  const stored = new Map<string, number>();
  for (const info of infos) {
    const loaded = await store.load(sessionId, info.seq);
    const run = String((loaded?.data as { run: string } | undefined)?.run);
    stored.set(run, (stored.get(run) ?? 0) + 1);
  }
  let lost = 0;
  let duplicated = 0;
  for (let run = 0; run < calls; run++) {
    const count = stored.get(tag(run)) ?? 0;
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
    uncut: calls - runs,
    committedBeforeCut,
    lost,
    duplicated,
    consistent,
  };
}

/**
 * Expect fault runs to have done their job: every call was cut, some after the server had
 * committed (so the retry had to replay), and yet every run is stored exactly once.
 */
export function expectEveryRunStoredOnce(report: FaultReport): void {
  expect(report).toMatchObject({ lost: 0, duplicated: 0, consistent: true });
  expect(report.cuts).toBe(report.runs);
  expect(report.failedFirst).toBeGreaterThan(report.runs / 4);
  // Some cuts fell between the commit and its reply, and the retry found the checkpoint.
  expect(report.committedBeforeCut).toBeGreaterThan(0);
}
