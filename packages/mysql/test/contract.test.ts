import { runContractTests } from '@ckpt/contract-tests';
import { type CheckpointBackend, kvBackend } from '@ckpt/core';
import { type MysqlBackend, mysql, mysqlKv } from '@ckpt/mysql';
import { describe, it } from 'vitest';
import { available, contractNamespaces, freshBackend, url } from './support.js';

const ALL = { concurrentWriters: true, listSessions: true, listStateKeys: true };
const asMysql = (b: CheckpointBackend) => b as MysqlBackend;

if (available) {
  runContractTests({
    name: 'mysql (MariaDB)',
    capabilities: ALL,
    connections: 6,
    create: () => freshBackend(contractNamespaces.take()),
    connect: (b) => mysql({ url, namespace: asMysql(b).namespace }),
    namespaced: (_b, namespace) => mysql({ url, namespace }),
    destroy: async (b) => {
      await b.close();
      await contractNamespaces.release(asMysql(b).namespace);
    },
  });

  const kvNamespace = new WeakMap<CheckpointBackend, string>();
  const openKv = (namespace: string) => {
    const backend = kvBackend(mysqlKv({ url, namespace }));
    kvNamespace.set(backend, namespace);
    return backend;
  };
  runContractTests({
    name: 'kvBackend(mysqlKv())',
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
  describe.skip('mysql [skipped: the server cannot be reached]', () =>
    it('runs the contract suite', () => {}));
}
