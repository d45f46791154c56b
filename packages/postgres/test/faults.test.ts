/** Connections cut at random bytes of checkpoint calls, resolved by idempotent retries. */

import {
  expectEveryRunStoredOnce,
  runFaultInjection,
  startFaultProxy,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore } from '@ckpt/core';
import { postgres } from '@ckpt/postgres';
import { describe, expect, it } from 'vitest';
import { available, dropAndClose, freshNamespace, url } from './support.js';

describe.skipIf(!available)('postgres under connection faults', () => {
  it('stores each of 200 cut checkpoint calls exactly once after retrying with its key', async () => {
    const server = new URL(url);
    const proxy = await startFaultProxy({
      host: server.hostname,
      port: Number(server.port || 5432),
    });
    const viaProxy = new URL(url);
    viaProxy.port = String(proxy.port);
    const backend = postgres({ url: viaProxy.toString(), namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    try {
      const report = await runFaultInjection({ store, proxy, runs: 200 });
      console.info('postgres fault runs:', JSON.stringify(report));
      expect(report.runs).toBe(200);
      expectEveryRunStoredOnce(report);
    } finally {
      await proxy.close();
      await dropAndClose(postgres({ url, namespace: backend.namespace }));
      await store.close();
    }
  }, 180_000);
});
