/** Connections cut at random bytes of checkpoint calls, resolved by idempotent retries. */

import { runFaultInjection, startFaultProxy } from '@ckpt/contract-tests';
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
      expect(report).toMatchObject({ runs: 200, lost: 0, duplicated: 0, consistent: true });
      expect(report.cuts).toBeGreaterThan(150);
      expect(report.failedFirst).toBeGreaterThan(50);
      // Some cuts fell between the commit and its reply, and the retry found the checkpoint.
      expect(report.committedBeforeCut).toBeGreaterThan(0);
    } finally {
      await proxy.close();
      await dropAndClose(postgres({ url, namespace: backend.namespace }));
      await store.close();
    }
  }, 180_000);
});
