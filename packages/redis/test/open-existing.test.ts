/** `create: false` on Redis: opening only a namespace that holds a store, writing no key. */
import { expectCkptError } from '@ckpt/contract-tests';
import {
  type ExistingStoreStorage,
  expectExistingStoreOpens,
  expectMissingStoreNotFound,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore, kvBackend, openStore } from '@ckpt/core';
import { type RedisClient, redis, redisKv } from '@ckpt/redis';
import type { Cluster } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { LAYOUT_VERSION } from '../src/migrate.js';
import {
  admin,
  available,
  clusterAvailable,
  clusterClient,
  keysOf,
  namespaceToDrop,
  url,
} from './support.js';

const clients: Cluster[] = [];
afterAll(async () => {
  for (const client of clients) await client.quit();
});

const contents = (ns: string) => keysOf(admin(), ns);
const backend: ExistingStoreStorage = {
  open: (namespace, create) => redis({ url, namespace, create }),
  contents,
};
const kv: ExistingStoreStorage = {
  open: (namespace, create) => kvBackend(redisKv({ url, namespace, create })),
  contents,
};

describe.skipIf(!available)('redis({ create: false }) on a single server', () => {
  it('refuses a namespace with no key with NOT_FOUND naming the URL, and writes no key, not even for a call', async () => {
    const ns = namespaceToDrop();
    const err = await expectMissingStoreNotFound(backend, ns);
    expect(err.message).toBe(
      `there is no ckpt store in namespace '${ns}' at ${url} (none of its keys exist); check the URL and the namespace, or open it without { create: false } to create a new store there.`,
    );
    expect(await contents(ns)).toEqual([]);
  });

  it('opens a store that exists, to read and write it', () =>
    expectExistingStoreOpens(backend, namespaceToDrop()));

  it('opens a namespace a store was opened on, even one closed at once, before any call', async () => {
    const [ns, kvNs] = [namespaceToDrop(), namespaceToDrop()];
    await redis({ url, namespace: ns }).close();
    await redisKv({ url, namespace: kvNs }).close?.();
    const again = redis({ url, namespace: ns, create: false });
    await again.ready();
    await again.close();
    const kvAgain = redisKv({ url, namespace: kvNs, create: false });
    expect(await kvAgain.get('k')).toBeUndefined();
    await kvAgain.close?.();
  });

  it('opens a namespace written before stores marked theirs, by its sessions, scopes or KV keys', async () => {
    const writes = [
      (ns: string) => new CheckpointStore(redis({ url, namespace: ns })).checkpoint('s', 1),
      (ns: string) => new CheckpointStore(redis({ url, namespace: ns })).state('x').set('k', 1),
      (ns: string) => redisKv({ url, namespace: ns }).set('k', 'v'),
    ];
    for (const write of writes) {
      const ns = namespaceToDrop();
      await write(ns);
      await admin().del(`${ns}:schema_version`);
      const again = redis({ url, namespace: ns, create: false });
      await again.ready();
      await again.close();
      // Marked, as it will hold values this version writes.
      expect(await admin().get(`${ns}:schema_version`)).toBe(LAYOUT_VERSION);
    }
  });

  it.each(['1', '2'])(
    'opens a namespace of layout version %s and marks it as this version, which that version does not know',
    async (earlier) => {
      const ns = namespaceToDrop();
      await new CheckpointStore(redis({ url, namespace: ns })).checkpoint('s', 1);
      await admin().set(`${ns}:schema_version`, earlier);
      const again = redis({ url, namespace: ns, create: false });
      expect((await new CheckpointStore(again).load('s'))?.data).toBe(1);
      await again.close();
      expect(await admin().get(`${ns}:schema_version`)).toBe(LAYOUT_VERSION);
    },
  );

  it('refuses a namespace marked with a layout it does not know with SCHEMA', async () => {
    const ns = namespaceToDrop();
    await admin().set(`${ns}:schema_version`, '9');
    const marked = redis({ url, namespace: ns, create: false });
    const err = await expectCkptError(marked.ready(), 'SCHEMA');
    expect(err.message).toMatch(/layout version "9".*upgrade @ckpt\/redis/);
    await marked.close();
  });

  it('holds redisKv to the same rule', async () => {
    await expectMissingStoreNotFound(kv, namespaceToDrop());
    await expectExistingStoreOpens(kv, namespaceToDrop());
  });

  it('makes openStore reject a misspelt namespace with NOT_FOUND, writing no key', async () => {
    const ns = namespaceToDrop();
    await expectCkptError(openStore(`${url}?namespace=${ns}`, { create: false }), 'NOT_FOUND');
    expect(await contents(ns)).toEqual([]);
  });
});

describe.skipIf(!clusterAvailable)('redis({ create: false }) on a cluster', () => {
  const onCluster: ExistingStoreStorage = {
    open(namespace, create) {
      const client = clusterClient();
      clients.push(client);
      return redis({ client: client as RedisClient, namespace, create });
    },
    contents: (ns) => keysOf(admin(true), ns),
  };

  it('refuses a namespace with no key with NOT_FOUND, writing no key on any master', async () => {
    const err = await expectMissingStoreNotFound(onCluster, namespaceToDrop(true));
    expect(err.message).toContain('at the given client');
  });

  it('opens a namespace that holds a store', () =>
    expectExistingStoreOpens(onCluster, namespaceToDrop(true)));
});
