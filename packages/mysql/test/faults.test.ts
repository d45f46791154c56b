/** Connections cut at random bytes of checkpoint calls, resolved by idempotent retries. */

import {
  expectEveryRunStoredOnce,
  runFaultInjection,
  startFaultProxy,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore } from '@ckpt/core';
import { mysql } from '@ckpt/mysql';
import { describe, expect, it } from 'vitest';
import { available, dropNamespace, freshNamespace, url } from './support.js';

describe.skipIf(!available)('mysql under connection faults', () => {
  it('stores each of 200 cut checkpoint calls exactly once after retrying with its key', async () => {
    const server = new URL(url);
    const proxy = await startFaultProxy({
      host: server.hostname,
      port: Number(server.port || 3306),
    });
    const viaProxy = new URL(url);
    viaProxy.port = String(proxy.port);
    const backend = mysql({ url: viaProxy.toString(), namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    try {
      const report = await runFaultInjection({ store, proxy, runs: 200 });
      console.info('mysql fault runs:', JSON.stringify(report));
      expect(report.runs).toBe(200);
      expectEveryRunStoredOnce(report);
    } finally {
      await proxy.close();
      await store.close();
      await dropNamespace(backend.namespace);
    }
  }, 180_000);
});
