import { runContractTests, runKvStoreTests } from '@ckpt/contract-tests';
import { kvBackend } from '@ckpt/core';
import { mysqlKv } from '@ckpt/mysql';
import { describe, it } from 'vitest';
import { available, contractNamespaces, freshBackend, url } from './support.js';

const ALL = {
  concurrentWriters: true,
  listSessions: true,
  listStateKeys: true,
  watch: false,
  tags: true,
};

if (available) {
  runContractTests({
    name: 'mysql (MariaDB)',
    capabilities: { ...ALL, watch: true },
    connections: 6,
    ...contractNamespaces.harness((namespace) => freshBackend(namespace)),
  });

  runContractTests({
    name: 'kvBackend(mysqlKv())',
    capabilities: ALL,
    modelRuns: 100,
    ...contractNamespaces.harness((namespace) => kvBackend(mysqlKv({ url, namespace }))),
  });

  runKvStoreTests({
    name: 'mysqlKv()',
    ...contractNamespaces.kvHarness((namespace) => mysqlKv({ url, namespace })),
  });
} else {
  describe.skip('mysql [skipped: the server cannot be reached]', () =>
    it('runs the contract suite', () => {}));
}
