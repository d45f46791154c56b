import { runContractTests } from '@ckpt/contract-tests';
import { type CheckpointBackend, kvBackend } from '@ckpt/core';
import { type PostgresBackend, postgres, postgresKv } from '@ckpt/postgres';
import { describe, it } from 'vitest';
import {
  available,
  bouncerAvailable,
  bouncerUrl,
  contractNamespaces,
  freshBackend,
  url,
} from './support.js';

const ALL = { concurrentWriters: true, listSessions: true, listStateKeys: true };
const pgBackend = (b: CheckpointBackend) => b as PostgresBackend;

/** The contract suite against PostgreSQL reached at `at` (the server, or PgBouncer in front of it). */
function postgresContract(name: string, at: string) {
  runContractTests({
    name,
    capabilities: ALL,
    connections: 6,
    create: () => freshBackend(at, contractNamespaces.take()),
    connect: (b) => postgres({ url: at, namespace: pgBackend(b).namespace }),
    namespaced: (_b, namespace) => postgres({ url: at, namespace }),
    destroy: async (b) => {
      await b.close();
      await contractNamespaces.release(pgBackend(b).namespace);
    },
  });
}

if (available) {
  postgresContract('postgres', url);
  if (bouncerAvailable)
    postgresContract('postgres through PgBouncer (transaction pooling)', bouncerUrl);

  const kvNamespace = new WeakMap<CheckpointBackend, string>();
  const openKv = (namespace: string) => {
    const backend = kvBackend(postgresKv({ url, namespace }));
    kvNamespace.set(backend, namespace);
    return backend;
  };
  runContractTests({
    name: 'kvBackend(postgresKv())',
    capabilities: ALL,
    modelRuns: 100,
    create: () => openKv(contractNamespaces.take()),
    connect: (b) => openKv(kvNamespace.get(b)!),
    destroy: async (b) => {
      await b.close();
      await contractNamespaces.release(kvNamespace.get(b)!);
    },
  });
} else {
  describe.skip('postgres [skipped: the server cannot be reached]', () =>
    it('runs the contract suite', () => {}));
}
