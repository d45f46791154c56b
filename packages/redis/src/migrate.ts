/**
 * What opening a store does to its namespace, in place of a migration: marking it as a store,
 * or finding it when a store must exist already (`create: false`). Removing it is destroy.ts.
 *
 * Redis has no schema to create, so a namespace is there when its marker key is (see schema.ts),
 * or, for one written before stores wrote the marker, when one of its catalogs is: every
 * session and state scope is listed in a catalog slice while it exists, and the KV store's
 * index holds every KV key.
 */
import { CkptError } from '@ckpt/core';
import { type StoreLocation, storeNotFound } from '@ckpt/core/adapter';
import { explained, type RedisClient } from './runner.js';
import { catalogKey, kvKeys, markerKey, SHARDS, scopeCatalogKey } from './schema.js';

/** The layout version this package writes and reads, as the marker records it. */
export const LAYOUT_VERSION = '1';

/** Record that namespace `ns` holds a store, unless it says so already. */
export async function markNamespace(client: RedisClient, ns: string): Promise<void> {
  await explained(client, client.set(markerKey(ns), LAYOUT_VERSION, 'NX'));
}

/**
 * Resolve when namespace `ns` holds a store; reject with NOT_FOUND when nothing of it exists,
 * or SCHEMA when its marker names a layout this package does not know. Reads only.
 */
export async function findNamespace(
  client: RedisClient,
  ns: string,
  existing: Omit<StoreLocation, 'where'>,
): Promise<void> {
  const location = { where: `namespace '${ns}'`, ...existing };
  const marker = await explained(client, client.get(markerKey(ns)));
  if (marker === LAYOUT_VERSION) return;
  if (marker !== null) {
    throw new CkptError(
      'SCHEMA',
      `${location.where} at ${location.at} has ckpt layout version ${JSON.stringify(marker)}, which this @ckpt/redis does not know; upgrade @ckpt/redis.`,
    );
  }
  // One key a command: the catalogs lie in different slots.
  const catalogs = [
    ...Array.from({ length: SHARDS }, (_, shard) => catalogKey(ns, shard)),
    ...Array.from({ length: SHARDS }, (_, shard) => scopeCatalogKey(ns, shard)),
    kvKeys(ns).index,
  ];
  const found = await Promise.all(catalogs.map((key) => explained(client, client.exists(key))));
  if (found.some((n) => Number(n) > 0)) return;
  throw storeNotFound(location, 'none of its keys exist');
}
