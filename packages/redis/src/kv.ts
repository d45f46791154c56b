/** A `KvStore` on Redis, with compareAndSet and list. */
import type { KvStore } from '@ckpt/core';
import { openAdapter } from '@ckpt/core/adapter';
import { connect, disconnect, type RedisOptions } from './connection.js';
import { redisErrorHint } from './error-hints.js';
import { IndexedHash } from './indexed-hash.js';
import { findNamespace, markNamespace } from './migrate.js';
import { kvKeys } from './schema.js';

/** A Redis KvStore for `kvBackend(redisKv({ url }))`: one command or script per call. */
export function redisKv(options: RedisOptions): KvStore {
  const connection = connect(options);
  const { client, namespace, existing } = connection;
  const entries = new IndexedHash(client, kvKeys(namespace), 'text');
  const opening = openAdapter(
    () =>
      existing ? findNamespace(client, namespace, existing) : markNamespace(client, namespace),
    () => disconnect(connection),
  );
  const ready = opening.migrated;
  // With create: false, each call waits until the namespace is found (see RedisBackend).
  const found = <A extends unknown[], T>(call: (...args: A) => Promise<T>) =>
    existing ? async (...args: A) => ready.then(() => call(...args)) : call;
  return {
    get: found((key: string) => entries.get(key)),
    set: found((key: string, value: string) => entries.set(key, value)),
    delete: found((key: string) => entries.delete(key)),
    compareAndSet: found((key: string, expected: string | null, value: string) =>
      entries.compareAndSet(key, expected, value),
    ),
    list: found((prefix: string, { after, limit }: { after?: string; limit?: number } = {}) =>
      entries.keys(prefix, after ?? null, limit ?? Number.MAX_SAFE_INTEGER),
    ),
    close: opening.close,
    errorHint: redisErrorHint,
  };
}
