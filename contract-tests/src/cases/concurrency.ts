/** Several writers on one session at once, over separate connections. */
import { type BackendCapabilities, type CheckpointStore, isCkptError } from '@ckpt/core';
import { describe, expect } from 'vitest';
import { CALLS_AT_ONCE_MAX_PAYLOAD, expectOwnOutcomesForCallsAtOnce } from '../calls-at-once.js';
import { itWith } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { allSettledOrThrow, settleAll, yieldToEventLoop } from '../util.js';

/** Concurrent callers across connections. */
export function concurrencyCases(
  t: ContractContext,
  caps: BackendCapabilities,
  connections: number,
): void {
  const it = itWith(caps, 'concurrentWriters');
  const perConnection = 25;

  async function openStores(): Promise<CheckpointStore[]> {
    const stores = [t.store];
    while (stores.length < connections) stores.push(await t.connect());
    return stores;
  }

  describe('concurrency', () => {
    it('gives concurrent appends from several connections distinct seqs with nothing lost', async () => {
      const stores = await openStores();
      const written = await allSettledOrThrow(
        stores.map(async (store, c) => {
          const mine = [];
          for (let i = 0; i < perConnection; i++) {
            mine.push(await store.checkpoint('s', { c, i }, { transcript: [`${c}:${i}`] }));
            await yieldToEventLoop();
          }
          return mine;
        }),
      );
      const all = written.flat();
      const total = connections * perConnection;
      expect(new Set(all.map((cp) => cp.seq)).size).toBe(total);
      expect(all.map((cp) => cp.seq).sort((a, b) => a - b)).toEqual(
        Array.from({ length: total }, (_, i) => i + 1),
      );
      for (const cp of all) expect((await t.store.load('s', cp.seq))?.data).toEqual(cp.data);
      const info = await t.store.info('s');
      expect(info?.checkpoints).toBe(total);
      expect(info?.head).toBe(total);
      // Each append's parent was the head at the time: the timeline is one unbroken chain.
      expect(await t.store.history('s')).toHaveLength(total);
      expect((await t.store.transcript('s', { limit: 1000 })).items).toHaveLength(total);
    });

    it('gives each of many calls made at once its own outcome, storing nothing of the refused', async () => {
      await expectOwnOutcomesForCallsAtOnce(
        t.storeWith({ maxPayloadBytes: CALLS_AT_ONCE_MAX_PAYLOAD }),
      );
    });

    it('lets exactly one of several writers with the same expectedHead win', async () => {
      const stores = await openStores();
      await t.store.checkpoint('s', 'base');
      for (let round = 0; round < 5; round++) {
        const head = (await t.store.head('s')) as number;
        const outcomes = await settleAll(connections * 2, (i) =>
          stores[i % stores.length]!.checkpoint('s', { round, i }, { expectedHead: head }),
        );
        const winners = outcomes.filter((o) => o.status === 'fulfilled');
        expect(winners).toHaveLength(1);
        for (const o of outcomes) {
          if (o.status === 'rejected') {
            expect(isCkptError(o.reason, 'CONFLICT')).toBe(true);
            expect(o.reason.details.actualHead).toBeGreaterThan(head);
          }
        }
        expect(await t.store.head('s')).toBe(head + 1);
      }
    });

    it('lets exactly one of several writers create a session with expectedHead null', async () => {
      const stores = await openStores();
      const outcomes = await settleAll(connections * 2, (i) =>
        stores[i % stores.length]!.checkpoint('new', i, { expectedHead: null }),
      );
      expect(outcomes.filter((o) => o.status === 'fulfilled')).toHaveLength(1);
      expect((await t.store.info('new'))?.checkpoints).toBe(1);
    });

    it('loses no update() under contention', async () => {
      const stores = await openStores();
      const rounds = 10;
      await allSettledOrThrow(
        stores.map(async (store) => {
          for (let i = 0; i < rounds; i++) {
            await store.update('counter', (cur) => ((cur?.data as number | undefined) ?? 0) + 1, {
              maxAttempts: 1000,
            });
            await yieldToEventLoop();
          }
        }),
      );
      expect((await t.store.load('counter'))?.data).toBe(connections * rounds);
    });

    it('loses no state update() under contention', async () => {
      const stores = await openStores();
      await allSettledOrThrow(
        stores.map(async (store) => {
          for (let i = 0; i < 10; i++) {
            await store.state('s').update('n', (v) => ((v as number | undefined) ?? 0) + 1);
            await yieldToEventLoop();
          }
        }),
      );
      expect(await t.store.state('s').get('n')).toBe(connections * 10);
    });

    it('writes once for concurrent retries with the same idempotency key', async () => {
      const stores = await openStores();
      await t.store.checkpoint('s', 'base');
      const outcomes = await settleAll(connections * 2, (i) =>
        stores[i % stores.length]!.checkpoint('s', 'once', { idempotencyKey: 'retry-me' }),
      );
      const seqs = outcomes.map((o) => (o.status === 'fulfilled' ? o.value.seq : -1));
      expect(new Set(seqs)).toEqual(new Set([2]));
      expect((await t.store.info('s'))?.checkpoints).toBe(2);
    });

    it('lets exactly one of several concurrent forks to the same id succeed', async () => {
      const stores = await openStores();
      for (let i = 0; i < 3; i++) await t.store.checkpoint('s', i);
      const outcomes = await settleAll(connections * 2, (i) =>
        stores[i % stores.length]!.fork('s', { newId: 'f', atSeq: (i % 3) + 1 }),
      );
      const won = outcomes.filter((o) => o.status === 'fulfilled');
      expect(won).toHaveLength(1);
      for (const o of outcomes) {
        if (o.status === 'rejected') expect(isCkptError(o.reason, 'CONFLICT')).toBe(true);
      }
      const head = (await t.store.head('f')) as number;
      expect(await t.store.history('f')).toEqual(Array.from({ length: head }, (_, i) => i + 1));
    });

    it('keeps the head on a stored checkpoint while writes, rollbacks and prunes race', async () => {
      const stores = await openStores();
      for (let i = 0; i < 5; i++) await t.store.checkpoint('s', i);
      await allSettledOrThrow(
        stores.map(async (store, c) => {
          for (let i = 0; i < 15; i++) {
            const op = (c + i) % 3;
            if (op === 0) await store.checkpoint('s', { c, i });
            else if (op === 1) {
              const seqs = (await store.list('s', { limit: 5 })).items.map((x) => x.seq);
              const target = seqs[i % Math.max(seqs.length, 1)];
              if (target !== undefined) {
                await store.rollback('s', target).catch((err) => {
                  if (!isCkptError(err, 'NOT_FOUND')) throw err; // pruned meanwhile
                });
              }
            } else await store.prune('s', { keepLast: 3 });
            const head = await store.head('s');
            expect(head).not.toBeNull();
            expect(await store.load('s')).not.toBeNull();
            await yieldToEventLoop();
          }
        }),
      );
      const info = await t.store.info('s');
      expect(await t.store.load('s', info!.head)).not.toBeNull();
    });

    // A read that looks up the head and then its checkpoint in two steps, each seeing a
    // different moment, finds nothing when a checkpoint and a prune land in between. The
    // window is short, so the race runs many rounds; each round prunes the previous head.
    it('reads the head whole while checkpoints and prunes race: load() never null, history() never empty', async () => {
      const [writer, ...readers] = await openStores();
      await writer!.checkpoint('s', 0);
      let writing = true;
      const write = async () => {
        try {
          for (let i = 1; i <= 300; i++) {
            await writer!.checkpoint('s', i);
            await writer!.prune('s', { keepLast: 1 });
            await yieldToEventLoop();
          }
        } finally {
          writing = false;
        }
      };
      let reads = 0;
      const read = async (store: CheckpointStore) => {
        while (writing) {
          const [loaded, history] = await Promise.all([store.load('s'), store.history('s')]);
          expect(loaded, 'load() of a session that exists').not.toBeNull();
          expect(history.length, 'history() of a session that exists').toBeGreaterThan(0);
          reads++;
          await yieldToEventLoop();
        }
      };
      await allSettledOrThrow([write(), ...readers.map(read)]);
      expect(reads).toBeGreaterThan(0);
      expect((await t.store.load('s'))?.data).toBe(300);
    });
  });
}
