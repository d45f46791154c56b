/** `create: false` on Redis: opening only a namespace that holds a store, writing no key. */
import { CheckpointStore, isCkptError, openStore } from '@ckpt/core';
import { type RedisClient, redis, redisKv } from '@ckpt/redis';
import type { Cluster } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import {
  admin,
  available,
  clusterAvailable,
  clusterClient,
  dropNamespace,
  freshNamespace,
  keysOf,
  url,
} from './support.js';

const made: { namespace: string; cluster: boolean }[] = [];
const clients: Cluster[] = [];
afterAll(async () => {
  for (const { namespace, cluster } of made) await dropNamespace(admin(cluster), namespace);
  for (const client of clients) await client.quit();
});

function namespace(cluster = false): string {
  const ns = freshNamespace();
  made.push({ namespace: ns, cluster });
  return ns;
}

async function failure(promise: Promise<unknown>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isCkptError(err), String(err)).toBe(true);
  return err as Error & { code: string };
}

describe.skipIf(!available)('redis({ create: false }) on a single server', () => {
  it('refuses a namespace with no key with NOT_FOUND naming the URL, and writes no key, not even for a call', async () => {
    const ns = namespace();
    const backend = redis({ url, namespace: ns, create: false });
    const err = await failure(backend.ready());
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toBe(
      `there is no ckpt store in namespace '${ns}' at ${url} (none of its keys exist); check the URL and the namespace, or open it without { create: false } to create a new store there.`,
    );
    const store = new CheckpointStore(backend);
    expect((await failure(store.checkpoint('s', 1))).code).toBe('NOT_FOUND');
    expect((await failure(store.state('x').set('k', 1))).code).toBe('NOT_FOUND');
    await store.close();
    expect(await keysOf(admin(), ns)).toEqual([]);
  });

  it('opens a namespace a store was opened on, even one closed at once, before any call', async () => {
    const ns = namespace();
    await redis({ url, namespace: ns }).close();
    const kv = redisKv({ url, namespace: namespace() });
    await kv.close?.();
    const store = new CheckpointStore(redis({ url, namespace: ns, create: false }));
    expect(await store.load('s')).toBeNull();
    const kvAgain = redisKv({ url, namespace: made.at(-1)!.namespace, create: false });
    expect(await kvAgain.get('k')).toBeUndefined();
    await kvAgain.close?.();
    await store.checkpoint('s', { step: 1 });
    expect((await store.load('s'))?.data).toEqual({ step: 1 });
    await store.close();
  });

  it('opens a namespace written before stores marked theirs, by its sessions, scopes or KV keys', async () => {
    const client = admin();
    for (const write of [
      (store: CheckpointStore) => store.checkpoint('s', 1),
      (store: CheckpointStore) => store.state('x').set('k', 1),
    ]) {
      const ns = namespace();
      const store = new CheckpointStore(redis({ url, namespace: ns }));
      await write(store);
      await store.close();
      await client.del(`${ns}:schema_version`);
      const again = redis({ url, namespace: ns, create: false });
      await again.ready();
      await again.close();
    }
    const ns = namespace();
    const kv = redisKv({ url, namespace: ns });
    await kv.set('k', 'v');
    await kv.close?.();
    await client.del(`${ns}:schema_version`);
    const again = redis({ url, namespace: ns, create: false });
    await again.ready();
    await again.close();
  });

  it('refuses a namespace marked with a layout it does not know with SCHEMA', async () => {
    const ns = namespace();
    await admin().set(`${ns}:schema_version`, '9');
    const backend = redis({ url, namespace: ns, create: false });
    const err = await failure(backend.ready());
    expect(err.code).toBe('SCHEMA');
    expect(err.message).toMatch(/layout version "9".*upgrade @ckpt\/redis/);
    await backend.close();
  });

  it('holds redisKv to the same rule', async () => {
    const ns = namespace();
    const kv = redisKv({ url, namespace: ns, create: false });
    expect((await failure(kv.set('k', 'v'))).code).toBe('NOT_FOUND');
    expect((await failure(kv.get('k'))).code).toBe('NOT_FOUND');
    await kv.close?.();
    expect(await keysOf(admin(), ns)).toEqual([]);
  });

  it('makes openStore reject a misspelt namespace with NOT_FOUND, writing no key', async () => {
    const ns = namespace();
    const err = await failure(openStore(`${url}?namespace=${ns}`, { create: false }));
    expect(err.code).toBe('NOT_FOUND');
    expect(await keysOf(admin(), ns)).toEqual([]);
  });
});

describe.skipIf(!clusterAvailable)('redis({ create: false }) on a cluster', () => {
  const onCluster = (ns: string, create?: boolean) => {
    const client = clusterClient();
    clients.push(client);
    return redis({ client: client as RedisClient, namespace: ns, create });
  };

  it('refuses a namespace with no key with NOT_FOUND, writing no key on any master', async () => {
    const ns = namespace(true);
    const backend = onCluster(ns, false);
    const err = await failure(new CheckpointStore(backend).checkpoint('s', 1));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toContain('at the given client');
    expect(await keysOf(admin(true), ns)).toEqual([]);
  });

  it('opens a namespace that holds a store', async () => {
    const ns = namespace(true);
    await new CheckpointStore(onCluster(ns)).checkpoint('s', 1);
    const store = new CheckpointStore(onCluster(ns, false));
    expect((await store.load('s'))?.data).toBe(1);
  });
});
