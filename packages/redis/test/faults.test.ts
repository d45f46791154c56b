/** Connections cut at random bytes: checkpoints resolved by idempotent retries, forks all or nothing. */

import {
  type Direction,
  expectEveryRunStoredOnce,
  runFaultInjection,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore } from '@ckpt/core';
import { redis } from '@ckpt/redis';
import { describe, expect, it } from 'vitest';
import { admin, available, dropNamespace, keysOf, throughProxy, url } from './support.js';

describe.skipIf(!available)('redis under connection faults', () => {
  it('stores each of 200 cut checkpoint calls exactly once after retrying with its key', async () => {
    const { proxy, backend, store } = await throughProxy();
    try {
      const report = await runFaultInjection({ store, proxy, runs: 200 });
      console.info('redis fault runs:', JSON.stringify(report));
      expect(report.runs).toBe(200);
      expectEveryRunStoredOnce(report);
    } finally {
      await store.close();
      await proxy.close();
      await dropNamespace(admin(), backend.namespace);
    }
  }, 180_000);

  it('leaves a fork cut at any byte either whole or absent, never half-made', async () => {
    const { proxy, backend, store } = await throughProxy();
    const direct = new CheckpointStore(redis({ url, namespace: backend.namespace }));
    try {
      for (let i = 1; i <= 30; i++) {
        await direct.checkpoint('source', { i, padding: 'x'.repeat(500) }, { transcript: [i] });
      }
      const whole = await direct.history('source');
      const items = (await direct.transcript('source', { limit: 100 })).items;
      await store.fork('source', { newId: 'warm' }); // connected, and both scripts cached
      proxy.resetCounts();
      await store.fork('source', { newId: 'measure' });
      const size = { ...proxy.counts };
      // Cuts all along the request (the copy never arrives whole), and in the last bytes of
      // the reply (the copy was published, only its answer is lost).
      const cuts: [Direction, number][] = [
        ...Array.from({ length: 40 }, (_, n): [Direction, number] => [
          'toServer',
          Math.floor((size.toServer * n) / 40),
        ]),
        ...Array.from({ length: 10 }, (_, n): [Direction, number] => [
          'toClient',
          size.toClient - 1 - n,
        ]),
      ];
      let made = 0;
      for (const [run, [direction, bytes]] of cuts.entries()) {
        const newId = `copy-${run}`;
        await backend.client.ping(); // reconnected after the last cut, handshake done
        proxy.cutAfter(bytes, direction);
        await store.fork('source', { newId }).catch(() => {});
        expect(proxy.fired).toBe(true);
        proxy.disarm();
        const info = await direct.info(newId);
        const hexId = Buffer.from(newId).toString('hex');
        const keys = (await keysOf(admin(), backend.namespace)).filter((k) => k.endsWith(hexId));
        if (info === null) {
          expect(keys).toEqual([]);
        } else {
          made++;
          expect(info).toMatchObject({ head: 30, checkpoints: 30 });
          expect(await direct.history(newId)).toEqual(whole);
          expect((await direct.transcript(newId, { limit: 100 })).items).toEqual(items);
        }
      }
      expect(made).toBe(10);
    } finally {
      await store.close();
      await direct.close();
      await proxy.close();
      await dropNamespace(admin(), backend.namespace);
    }
  }, 60_000);
});
