/**
 * A namespace as a whole: marking it as a store when a store opens, finding it when a store
 * must exist already (`create: false`), and removing every key of it (`destroy()`).
 *
 * Redis has no schema to create, so a namespace is there when its marker key is (see keys.ts),
 * or, for one written before stores wrote the marker, when one of its catalogs is: every
 * session and state scope is listed in a catalog slice while it exists, and the KV store's
 * index holds every KV key.
 */
import { once } from 'node:events';
import { CkptError } from '@ckpt/core';
import { type StoreLocation, storeNotFound } from '@ckpt/core/adapter';
import { Cluster, type Redis } from 'ioredis';
import {
  catalogKey,
  kvKeys,
  markerKey,
  namespacePattern,
  SHARDS,
  scopeCatalogKey,
} from './keys.js';
import { explained, type RedisClient } from './script.js';

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

// A keyPrefix is in the names SCAN returns but not added to its MATCH pattern, and may hold
// characters a pattern reads as wildcards.
const globEscape = (text: string) => text.replace(/[*?[\]\\]/g, '\\$&');

/**
 * The servers that hold keys, each with the prefix the client puts before every key: the
 * client itself, or every master of a cluster.
 */
async function masters(client: RedisClient): Promise<{ node: Redis; prefix: string }[]> {
  if (!(client instanceof Cluster))
    return [{ node: client, prefix: client.options.keyPrefix ?? '' }];
  if (client.status !== 'ready') await once(client, 'ready');
  const prefix = client.options.keyPrefix ?? client.options.redisOptions?.keyPrefix ?? '';
  return client.nodes('master').map((node) => ({ node, prefix }));
}

/**
 * Remove every key of namespace `ns`: SCAN on each master (never KEYS, which blocks the
 * server), and UNLINK of what it finds on the master that holds it, a batch at a time. Keys of
 * other namespaces never match (`ns:*`, and a namespace holds no `:`). The marker goes last,
 * so that a destroy cut short leaves a namespace that still opens (with `create: false` too),
 * and running destroy again finishes it.
 */
export async function dropNamespace(client: RedisClient, ns: string): Promise<void> {
  const marker = markerKey(ns);
  // A command first: it waits for the connection (and a cluster's slots), or fails saying why.
  await explained(client, client.exists(marker));
  for (const { node, prefix } of await masters(client)) {
    // The node adds its own prefix (if any) to the keys of its commands, not to SCAN's results.
    const own = node.options.keyPrefix ?? '';
    const pattern = globEscape(prefix) + namespacePattern(ns);
    let cursor = '0';
    do {
      const [next, keys] = await explained(
        client,
        node.scan(cursor, 'MATCH', pattern, 'COUNT', 1000),
      );
      if (keys.length > 0) {
        const batch = node.pipeline();
        for (const key of keys) {
          const name = key.startsWith(own) ? key.slice(own.length) : key;
          if (key !== prefix + marker) batch.unlink(name);
        }
        for (const [err] of (await batch.exec()) ?? []) if (err) throw err;
      }
      cursor = next;
    } while (cursor !== '0');
  }
  await explained(client, client.unlink(marker));
}
