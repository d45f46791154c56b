/**
 * What opening a store does to its namespace, in place of a migration: marking it as a store
 * of this layout version, or finding it when a store must exist already (`create: false`).
 * Removing it is destroy.ts.
 *
 * Redis has no schema to create, so a namespace is there when its marker key is (see schema.ts),
 * or, for one written before stores wrote the marker, when one of its catalogs is: every
 * session and state scope is listed in a catalog slice while it exists, and the KV store's
 * index holds every KV key.
 *
 * Layout versions:
 * 1. Checkpoint data, transcript items and state values as the UTF-8 of the text core hands
 *    over (an encoded value as `ckpt1;…;<base64>`).
 * 2. Those values as bytes (see storedBytesOf): an encoded value as its bytes, a quarter smaller.
 *    Nothing is rewritten: the values version 1 wrote stay, and every read takes either form,
 *    so the step only changes the marker. A process of version 1 would read the bytes as text,
 *    so it must not open the namespace after: opened with `create: false`, it refuses the
 *    marker with SCHEMA.
 * 3. Tags: a session's in its hash (`tags`), and an entry for each in its shard's tag index,
 *    which every write that moves its updatedAt or removes it keeps in step (see schema.ts).
 *    Sessions written before have no tags, and so no entries: nothing is rewritten, and the step
 *    only changes the marker. A process of version 2 would move or delete a tagged session and
 *    leave its entries behind, so it must not write the namespace after: it refuses the marker
 *    with SCHEMA as it opens, and at each checkpoint, import and fork.
 */
import { CkptError } from '@ckpt/core';
import { type StoreLocation, storeNotFound } from '@ckpt/core/adapter';
import { explained, type RedisClient } from './runner.js';
import { catalogKey, kvKeys, markerKey, SHARDS, scopeCatalogKey } from './schema.js';
import { markLayout } from './statements.js';

/** The layout version this package writes and reads, as the marker records it. */
export const LAYOUT_VERSION = '3';

/** The versions before, whose namespaces this package reads, and marks as of its own. */
const EARLIER_LAYOUT_VERSIONS = ['1', '2'];

/**
 * Record that namespace `ns` holds a store of this layout version; reject with SCHEMA when its
 * marker names a layout this package does not know. `at`: where it is, for that message.
 */
export async function markNamespace(client: RedisClient, ns: string, at?: string): Promise<void> {
  const marked = await markLayout.run<string>(
    client,
    [markerKey(ns)],
    [LAYOUT_VERSION, ...EARLIER_LAYOUT_VERSIONS],
  );
  if (marked !== LAYOUT_VERSION) throw unknownLayout(ns, at, marked);
}

function unknownLayout(ns: string, at: string | undefined, marker: string): CkptError {
  return new CkptError(
    'SCHEMA',
    `namespace '${ns}'${at === undefined ? '' : ` at ${at}`} has ckpt layout version ${JSON.stringify(marker)}, which this @ckpt/redis does not know; upgrade @ckpt/redis.`,
  );
}

/**
 * The namespace's marker naming this layout version, which every write of a value waits for:
 * a process of the version before must not find the namespace as its own once it holds a value
 * this version wrote. Marked as the store opens (`first`); an attempt that failed, as when the
 * server was not up yet, is made again by the next write.
 */
export class LayoutMark {
  #marked: Promise<void> | undefined;

  constructor(
    readonly client: RedisClient,
    readonly namespace: string,
    first: Promise<void>,
  ) {
    this.#marked = this.#retriedAfterFailure(first);
  }

  /** Resolves once the marker names this layout version. */
  marked(): Promise<void> {
    this.#marked ??= this.#retriedAfterFailure(markNamespace(this.client, this.namespace));
    return this.#marked;
  }

  #retriedAfterFailure(attempt: Promise<void>): Promise<void> {
    return attempt.catch((err: unknown) => {
      this.#marked = undefined;
      throw err;
    });
  }
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
  if (marker !== null && !EARLIER_LAYOUT_VERSIONS.includes(marker)) {
    throw unknownLayout(ns, location.at, marker);
  }
  if (marker === null && !(await anyCatalog(client, ns))) {
    throw storeNotFound(location, 'none of its keys exist');
  }
  // A store of a version before, or one written before stores marked theirs: marked now, as
  // it will hold values this version writes.
  await markNamespace(client, ns, location.at);
}

/** Whether any catalog of namespace `ns` exists. */
async function anyCatalog(client: RedisClient, ns: string): Promise<boolean> {
  // One key a command: the catalogs lie in different slots.
  const catalogs = [
    ...Array.from({ length: SHARDS }, (_, shard) => catalogKey(ns, shard)),
    ...Array.from({ length: SHARDS }, (_, shard) => scopeCatalogKey(ns, shard)),
    kvKeys(ns).index,
  ];
  const found = await Promise.all(catalogs.map((key) => explained(client, client.exists(key))));
  return found.some((n) => Number(n) > 0);
}
