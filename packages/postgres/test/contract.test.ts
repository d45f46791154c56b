import { runContractTests, runKvStoreTests } from '@ckpt/contract-tests';
import { kvBackend } from '@ckpt/core';
import { postgresKv } from '@ckpt/postgres';
import { describe, it } from 'vitest';
import {
  available,
  bouncerAvailable,
  bouncerUrl,
  contractNamespaces,
  freshBackend,
  url,
} from './support.js';

/** kvBackend(postgresKv()): tags in index records of the KV store (core), no change log. */
const KV = {
  concurrentWriters: true,
  listSessions: true,
  listStateKeys: true,
  watch: false,
  tags: true,
};
/** The native backend: its change log, and tags in the tags table (schema 9). */
const ALL = { ...KV, watch: true };

/** The contract suite against PostgreSQL reached at `at` (the server, or PgBouncer in front of it). */
function postgresContract(name: string, at: string) {
  runContractTests({
    name,
    capabilities: ALL,
    connections: 6,
    ...contractNamespaces.harness((namespace) => freshBackend(at, namespace)),
  });
}

if (available) {
  postgresContract('postgres', url);
  if (bouncerAvailable)
    postgresContract('postgres through PgBouncer (transaction pooling)', bouncerUrl);

  runContractTests({
    name: 'kvBackend(postgresKv())',
    capabilities: KV,
    modelRuns: 100,
    ...contractNamespaces.harness((namespace) => kvBackend(postgresKv({ url, namespace }))),
  });

  runKvStoreTests({
    name: 'postgresKv()',
    ...contractNamespaces.kvHarness((namespace) => postgresKv({ url, namespace })),
  });
} else {
  describe.skip('postgres [skipped: the server cannot be reached]', () =>
    it('runs the contract suite', () => {}));
}
