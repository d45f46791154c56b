/**
 * Group commit on a pool: the cases every server backend that sends the checkpoints waiting
 * for a busy pool together must pass. Each gets its outcome, a call with a free connection
 * goes alone, and connections cut under batches lose and duplicate nothing.
 */
import type { CheckpointStore } from '@ckpt/core';
import { expect, it } from 'vitest';
import { CALLS_AT_ONCE_MAX_PAYLOAD, expectOwnOutcomesForCallsAtOnce } from './calls-at-once.js';
import { startFaultProxy } from './fault-proxy.js';
import { expectEveryRunStoredOnce, runFaultInjection } from './fault-runs.js';

/** A store whose backend batches, and what it says it batched. */
export interface BatchingStore {
  store: CheckpointStore;
  batched(): { batches: number; calls: number };
}

/** How the pool batch cases open stores on one server. */
export interface PoolBatchHarness {
  /** The server's URL. */
  url: string;
  /** The port the URL means when it names none. */
  defaultPort: number;
  /**
   * A store with group commit on, in a fresh namespace, on a pool of `connections` to `url`
   * (default: the harness's), with `maxPayloadBytes` as given; the harness cleans it up.
   */
  open(
    connections: number,
    options?: { url?: string; maxPayloadBytes?: number },
  ): Promise<BatchingStore>;
}

/** Register the pool batch cases (inside a describe of the backend's). */
export function poolBatchCases(h: PoolBatchHarness): void {
  it('sends calls that wait for a busy pool together, each with its own outcome', async () => {
    const { store, batched } = await h.open(2, { maxPayloadBytes: CALLS_AT_ONCE_MAX_PAYLOAD });
    await expectOwnOutcomesForCallsAtOnce(store);
    const { batches, calls } = batched();
    expect(batches).toBeGreaterThan(0);
    expect(calls).toBeGreaterThan(batches);
  });

  it('records the needs of calls that waited for a busy pool, beside calls without', async () => {
    const { store, batched } = await h.open(1);
    const agents = Array.from({ length: 16 }, (_, i) => `agent-${i}`);
    for (const id of agents) await store.checkpoint(id, { value: id });
    // Every other agent's next checkpoint needs its first; all wait for the one connection.
    await Promise.all(
      agents.map((id, i) => store.checkpoint(id, { step: 2 }, i % 2 ? {} : { needs: [1] })),
    );
    expect(batched().calls).toBeGreaterThan(batched().batches);
    for (const [i, id] of agents.entries()) {
      expect(await store.prune(id, { keepLast: 1 })).toBe(i % 2 ? 1 : 0);
      const kept = (await store.list(id)).items.map((c) => c.seq);
      expect(kept).toEqual(i % 2 ? [2] : [2, 1]);
    }
  });

  it('sends a call alone, at once, while the pool has a free connection', async () => {
    const { store, batched } = await h.open(4);
    for (let i = 0; i < 5; i++) await store.checkpoint('alone', i);
    await Promise.all([store.checkpoint('a', 1), store.checkpoint('b', 1)]);
    expect(batched()).toEqual({ batches: 0, calls: 0 });
  });

  it('stores each call of 100 cut runs of 8 at once exactly once after retrying with its key', async () => {
    const server = new URL(h.url);
    const proxy = await startFaultProxy({
      host: server.hostname,
      port: Number(server.port || h.defaultPort),
    });
    try {
      const viaProxy = new URL(h.url);
      viaProxy.port = String(proxy.port);
      const { store, batched } = await h.open(2, { url: viaProxy.toString() });
      const report = await runFaultInjection({ store, proxy, runs: 100, concurrency: 8 });
      console.info(
        `batched fault runs on ${server.protocol}`,
        JSON.stringify({ ...report, ...batched() }),
      );
      expectEveryRunStoredOnce(report);
      expect(batched().calls).toBeGreaterThan(batched().batches);
    } finally {
      await proxy.close();
    }
  }, 180_000);
}

/**
 * On `store` (a pool of one connection, whose server refuses every checkpoint of session
 * `poison` with a message holding "poison refused"), make four checkpoints at once: the first
 * goes alone, the other three in one batch. Expect only the poisoned one to fail, with
 * BACKEND, and nothing of it stored.
 */
export async function expectOnlyTheRefusedCallOfABatchFails({
  store,
  batched,
}: BatchingStore): Promise<void> {
  const outcomes = await Promise.allSettled(
    ['first', 'a', 'poison', 'b'].map((id) => store.checkpoint(id, 1)),
  );
  expect(batched()).toEqual({ batches: 1, calls: 3 });
  expect(outcomes.map((o) => o.status)).toEqual([
    'fulfilled',
    'fulfilled',
    'rejected',
    'fulfilled',
  ]);
  expect((outcomes[2] as PromiseRejectedResult).reason).toMatchObject({
    code: 'BACKEND',
    message: expect.stringMatching(/poison refused/),
  });
  expect(await store.info('poison')).toBeNull();
  for (const id of ['first', 'a', 'b'])
    expect(await store.info(id)).toMatchObject({ head: 1, checkpoints: 1 });
}
