import { runContractTests, runKvStoreTests } from '@ckpt/contract-tests';
import { backendRetentionCases } from '@ckpt/contract-tests/servers';
import { type CheckpointBackend, kvBackend } from '@ckpt/core';
import { type RedisBackend, type RedisClient, redis, redisKv } from '@ckpt/redis';
import { Redis } from 'ioredis';
import { afterAll, describe, it } from 'vitest';
import { CLIENT_OPTIONS } from '../src/connection.js';
import {
  admin,
  available,
  clusterAvailable,
  clusterClient,
  dropNamespace,
  freshNamespace,
  url,
} from './support.js';

const ALL = {
  concurrentWriters: true,
  listSessions: true,
  listStateKeys: true,
  watch: false,
  tags: true,
};
/**
 * The native backend has a change log besides (see change-log.ts), and tags in a tag index of
 * its own (tag-listing.ts); kvBackend over redisKv has a tag index (index records) but no
 * change log.
 */
const NATIVE = { ...ALL, watch: true };

/**
 * The contract suite on the single server or the cluster. Each backend gets a client of its
 * own (the harness's connections are separate clients); the harness quits them, since a
 * backend never closes a client it was given.
 */
function redisContract(cluster: boolean) {
  const where = cluster ? 'Redis Cluster, 3 masters' : 'a single Redis server';
  const clients = new Map<object, RedisClient>();
  const namespaces = new Map<object, string>();
  const open = <T extends object>(namespace: string, make: (client: RedisClient) => T): T => {
    const client = cluster ? clusterClient() : new Redis(url, CLIENT_OPTIONS);
    const made = make(client);
    clients.set(made, client);
    namespaces.set(made, namespace);
    return made;
  };
  const backend = (namespace: string) => open(namespace, (client) => redis({ client, namespace }));
  const kv = (namespace: string) =>
    open(namespace, (client) => kvBackend(redisKv({ client, namespace })));
  const destroy = async (b: CheckpointBackend) => {
    await b.close();
    await clients.get(b)?.quit();
    await dropNamespace(admin(cluster), namespaces.get(b)!);
  };

  runContractTests({
    name: `redis on ${where}`,
    capabilities: NATIVE,
    connections: 6,
    create: () => backend(freshNamespace()),
    connect: (b) => backend((b as RedisBackend).namespace),
    namespaced: (_b, namespace) => backend(namespace),
    destroy,
  });

  runContractTests({
    name: `kvBackend(redisKv()) on ${where}`,
    capabilities: ALL,
    modelRuns: 100,
    create: () => kv(freshNamespace()),
    connect: (b) => kv(namespaces.get(b)!),
    namespaced: (_b, namespace) => kv(namespace),
    destroy,
  });

  runKvStoreTests({
    name: `redisKv() on ${where}`,
    create: () => {
      const namespace = freshNamespace();
      return open(namespace, (client) => redisKv({ client, namespace }));
    },
    destroy: async (store) => {
      await store.close?.();
      await clients.get(store)?.quit();
      await dropNamespace(admin(cluster), namespaces.get(store)!);
    },
  });
}

if (available) redisContract(false);
else
  describe.skip('redis [skipped: the server cannot be reached]', () =>
    it('runs the contract suite', () => {}));

if (clusterAvailable) redisContract(true);
else
  describe.skip('redis cluster [skipped: the cluster cannot be reached]', () =>
    it('runs the contract suite', () => {}));

// The same suite with clients the backends open themselves from a URL.
if (available) {
  runContractTests({
    name: 'redis({ url })',
    capabilities: NATIVE,
    modelRuns: 50,
    create: () => redis({ url, namespace: freshNamespace() }),
    connect: (b) => redis({ url, namespace: (b as RedisBackend).namespace }),
    namespaced: (_b, namespace) => redis({ url, namespace }),
    destroy: async (b) => {
      await b.close();
      await dropNamespace(admin(), (b as RedisBackend).namespace);
    },
  });
}

// Retention at the backend contract, on the single server and on the cluster (whose clients the
// harness cannot quit, as a backend never closes a client it was given: they are quit here).
describe.each([
  { where: 'a single Redis server', cluster: false, up: available },
  { where: 'Redis Cluster, 3 masters', cluster: true, up: clusterAvailable },
])('redis retention on $where', ({ cluster, up }) => {
  const clients: RedisClient[] = [];
  afterAll(async () => {
    for (const client of clients) await client.quit();
  });
  const on = (namespace: string) => {
    const client = cluster ? clusterClient() : new Redis(url, CLIENT_OPTIONS);
    clients.push(client);
    return redis({ client, namespace });
  };
  if (up) {
    backendRetentionCases({
      name: cluster ? 'redis cluster' : 'redis',
      open: () => on(freshNamespace()),
      connect: (backend) => on((backend as RedisBackend).namespace),
    });
  } else {
    describe.skip(`[skipped: ${cluster ? 'the cluster' : 'the server'} cannot be reached]`, () =>
      it('runs the retention cases', () => {}));
  }
});
