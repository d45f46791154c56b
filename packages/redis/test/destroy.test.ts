/** `destroy()` on Redis: every key of the namespace, found with SCAN on every master. */
import { CheckpointStore, kvBackend } from '@ckpt/core';
import { type RedisClient, redis, redisKv } from '@ckpt/redis';
import { type Cluster, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { tagIndexKey } from '../src/schema.js';
import {
  admin,
  available,
  clusterAvailable,
  clusterClient,
  dropNamespace,
  keysOf,
  namespaceToDrop,
  url,
} from './support.js';

const clients: (Cluster | Redis)[] = [];
afterAll(async () => {
  for (const client of clients) await client.quit();
});

/**
 * A store in `ns` on `client` with tagged sessions (more keys than one SCAN page), state and a
 * KV entry.
 */
async function filled(client: RedisClient, ns: string, sessions = 3): Promise<CheckpointStore> {
  const kv = redisKv({ client, namespace: ns });
  await kv.set('k', 'v');
  const store = new CheckpointStore(redis({ client, namespace: ns }));
  await Promise.all(
    Array.from({ length: sessions }, (_, i) =>
      store.checkpoint(`s${i}`, i, {
        transcript: ['t'],
        idempotencyKey: 'k',
        tags: { user: `u${i % 3}` },
      }),
    ),
  );
  await store.state('x').set('k', 1);
  return store;
}

/** A client of the single server (with `keyPrefix`, if given), quit after the file's tests. */
function ownClient(keyPrefix?: string): Redis {
  const client = new Redis(url, keyPrefix === undefined ? {} : { keyPrefix });
  clients.push(client);
  return client;
}

describe.skipIf(!available)('destroy() on a single Redis server', () => {
  it("removes every key of the namespace, the KV store's and the marker included, over many SCAN pages", async () => {
    const ns = namespaceToDrop();
    const store = await filled(ownClient(), ns, 300);
    expect((await keysOf(admin(), ns)).length).toBeGreaterThan(1000);
    expect(await keysOf(admin(), ns)).toContain(tagIndexKey(ns, 0));
    await store.destroy();
    expect(await keysOf(admin(), ns)).toEqual([]);
  });

  it('leaves another namespace, even one whose name starts with this one, as it was', async () => {
    const ns = namespaceToDrop();
    const other = `${ns}_x`;
    const kept = await filled(ownClient(), other);
    const keptKeys = (await keysOf(admin(), other)).sort();
    const store = await filled(ownClient(), ns);
    await store.destroy();
    expect((await keysOf(admin(), other)).sort()).toEqual(keptKeys);
    expect((await kept.load('s1'))?.data).toBe(1);
    // ns:* never matches the other namespace's keys, so the file's cleanup would leave them.
    await dropNamespace(admin(), other);
  });

  it("removes the keys under a client's keyPrefix, and nothing outside it", async () => {
    const ns = namespaceToDrop();
    const plain = await filled(ownClient(), ns);
    const plainKeys = (await keysOf(admin(), ns)).sort();
    const store = await filled(ownClient('app:'), ns);
    expect((await keysOf(admin(), `app:${ns}`)).length).toBeGreaterThan(0);
    await store.destroy();
    expect(await keysOf(admin(), `app:${ns}`)).toEqual([]);
    expect((await keysOf(admin(), ns)).sort()).toEqual(plainKeys);
    await plain.close();
  });

  it('leaves a client it was given open, and quits one it opened', async () => {
    const client = ownClient();
    await (await filled(client, namespaceToDrop())).destroy();
    expect(await client.ping()).toBe('PONG');
    const owned = redis({ url, namespace: namespaceToDrop() });
    await new CheckpointStore(owned).destroy();
    expect(owned.client.status).toBe('end');
  });

  it('leaves nothing a new store in the namespace would see', async () => {
    const ns = namespaceToDrop();
    await (await filled(ownClient(), ns)).destroy();
    const again = new CheckpointStore(redis({ client: ownClient(), namespace: ns }));
    expect((await again.sessions()).items).toEqual([]);
    expect((await again.sessions({ where: { user: 'u0' } })).items).toEqual([]);
    expect(await again.state('x').get('k')).toBeUndefined();
    const kv = kvBackend(redisKv({ client: ownClient(), namespace: ns }));
    expect(await new CheckpointStore(kv).state('x').get('k')).toBeUndefined();
  });
});

describe.skipIf(!clusterAvailable)('destroy() on a Redis Cluster', () => {
  it('removes every key of the namespace from every master, and no other namespace', async () => {
    const [ns, other] = [namespaceToDrop(true), namespaceToDrop(true)];
    const client = clusterClient();
    clients.push(client);
    const kept = await filled(client, other, 40);
    const keptKeys = (await keysOf(admin(true), other)).sort();
    const store = await filled(client, ns, 40);
    expect((await keysOf(admin(true), ns)).length).toBeGreaterThan(100);
    await store.destroy();
    expect(await keysOf(admin(true), ns)).toEqual([]);
    expect((await keysOf(admin(true), other)).sort()).toEqual(keptKeys);
    expect((await kept.load('s1'))?.data).toBe(1);
  });
});
