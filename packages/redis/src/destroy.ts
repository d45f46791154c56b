/** Removing a namespace whole, for `destroy()`: every key of it, the KV store's and the marker included. */
import { once } from 'node:events';
import { Cluster, type Redis } from 'ioredis';
import { explained, type RedisClient } from './runner.js';
import { markerKey, namespacePattern } from './schema.js';

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
