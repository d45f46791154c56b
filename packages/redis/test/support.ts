/** Shared by the Redis tests: the single server and the cluster, fresh namespaces, cleanup. */
import { once } from 'node:events';
import { type FaultProxy, startFaultProxy } from '@ckpt/contract-tests/servers';
import { CheckpointStore } from '@ckpt/core';
import { type RedisBackend, type RedisClient, type RedisOptions, redis } from '@ckpt/redis';
import { serviceAvailable, serviceUrl } from '@ckpt/test-servers';
import { Cluster, Redis, type RedisOptions as RedisClientOptions } from 'ioredis';
import { afterAll } from 'vitest';
import { CLIENT_OPTIONS } from '../src/connection.js';

export const url = serviceUrl('redis');

/** The cluster's seed nodes (scripts/start-redis-cluster.sh starts three masters on 7000-7002). */
export const clusterUrl = process.env.CKPT_TEST_REDIS_CLUSTER_URL || 'redis://127.0.0.1:7000';

/**
 * Connect to the Redis at `at` once and run `check` on it. The probe's failure is its answer:
 * the client neither retries nor logs it.
 */
async function probe(at: string, check: (client: Redis) => Promise<void> = async () => {}) {
  const client = new Redis(at, {
    lazyConnect: true,
    maxRetriesPerRequest: 0,
    retryStrategy: () => null,
  });
  client.on('error', () => {});
  try {
    await client.connect();
    await check(client);
  } finally {
    client.disconnect();
  }
}

/** Whether the single server answers. */
export const available = await serviceAvailable(`Redis at ${url}`, () => probe(url));

/** Whether the cluster answers with every slot served. */
export const clusterAvailable = await serviceAvailable(
  `Redis Cluster at ${clusterUrl} (scripts/start-redis-cluster.sh)`,
  () =>
    probe(clusterUrl, async (client) => {
      const info = await client.cluster('INFO');
      if (!String(info).includes('cluster_state:ok')) throw new Error('cluster_state is not ok');
    }),
);

/** A new client on the cluster, its connections made with `options` too; the caller quits it. */
export function clusterClient(options: RedisClientOptions = {}): Cluster {
  const seed = new URL(clusterUrl);
  return new Cluster([{ host: seed.hostname, port: Number(seed.port || 7000) }], {
    // As the README asks: a command whose connection closed is not sent again.
    retryDelayOnFailover: 0,
    redisOptions: { ...CLIENT_OPTIONS, ...options },
  });
}

let made = 0;
/** A namespace no other test or run uses. */
export function freshNamespace(): string {
  return `t${process.pid}_${made++}_${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * The masters that hold a client's keys: the client itself, or every master of a cluster,
 * once the client knows them (a new cluster client lists none until it is ready).
 */
export async function masters(client: RedisClient): Promise<Redis[]> {
  if (!(client instanceof Cluster)) return [client];
  if (client.status !== 'ready') await once(client, 'ready');
  return client.nodes('master');
}

/** Every key of `namespace`, found with SCAN on every master. */
export async function keysOf(client: RedisClient, namespace: string): Promise<string[]> {
  const found: string[] = [];
  for (const node of await masters(client)) {
    let cursor = '0';
    do {
      const [next, keys] = await node.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0');
  }
  return found;
}

/** Remove every key of `namespace`. */
export async function dropNamespace(client: RedisClient, namespace: string): Promise<void> {
  for (const key of await keysOf(client, namespace)) await client.unlink(key);
}

// Cleanup runs on clients of its own: a test may have closed the backend's.
const admins = new Map<string, RedisClient>();
const toDrop: { namespace: string; cluster: boolean }[] = [];
afterAll(async () => {
  for (const { namespace, cluster } of toDrop.splice(0)) {
    await dropNamespace(admin(cluster), namespace);
  }
  for (const client of admins.values()) await client.quit();
  admins.clear();
});

/** A fresh namespace whose keys are removed after the file's tests (on the cluster, if `cluster`). */
export function namespaceToDrop(cluster = false): string {
  const namespace = freshNamespace();
  toDrop.push({ namespace, cluster });
  return namespace;
}

/** A client for cleanup on the single server (`cluster` false) or the cluster. */
export function admin(cluster = false): RedisClient {
  const key = cluster ? 'cluster' : 'single';
  let client = admins.get(key);
  if (!client) {
    client = cluster ? clusterClient() : new Redis(url);
    admins.set(key, client);
  }
  return client;
}

/** The single server and the cluster, for the tests that run on both (`describe.each`). */
export const servers = [
  { name: 'a single server', cluster: false, up: available },
  { name: 'a cluster', cluster: true, up: clusterAvailable },
];

/**
 * Open backends on the cluster (`cluster`) or the single server, each on a client of its own,
 * in a fresh namespace unless one is given; the describe block that calls this closes them and
 * removes their keys after its tests.
 */
export function backendsOn(cluster: boolean): (namespace?: string) => RedisBackend {
  const opened: RedisBackend[] = [];
  afterAll(async () => {
    for (const backend of opened) {
      await backend.close();
      await backend.client.quit();
      await dropNamespace(admin(cluster), backend.namespace);
    }
  });
  return (namespace = freshNamespace()) => {
    const client = cluster ? clusterClient() : new Redis(url, CLIENT_OPTIONS);
    const backend = redis({ client, namespace });
    opened.push(backend);
    return backend;
  };
}

/** A backend on the single server in a fresh namespace. */
export function freshBackend(options: Partial<RedisOptions> = {}) {
  return redis({ url, namespace: freshNamespace(), ...options } as RedisOptions);
}

/** A store in a fresh namespace that reaches the server through a fault proxy. */
export async function throughProxy(): Promise<{
  proxy: FaultProxy;
  backend: RedisBackend;
  store: CheckpointStore;
}> {
  const server = new URL(url);
  const proxy = await startFaultProxy({ host: server.hostname, port: Number(server.port || 6379) });
  const viaProxy = new URL(url);
  viaProxy.port = String(proxy.port);
  const backend = redis({ url: viaProxy.toString(), namespace: freshNamespace() });
  return { proxy, backend, store: new CheckpointStore(backend) };
}
