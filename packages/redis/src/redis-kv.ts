/** A `KvStore` on Redis, with compareAndSet and list. */
import type { KvStore } from '@ckpt/core';
import { connect, disconnect, type RedisOptions } from './connection.js';
import { redisErrorHint } from './error-hints.js';
import { IndexedHash } from './indexed-hash.js';
import { kvKeys } from './keys.js';

/** A Redis KvStore for `kvBackend(redisKv({ url }))`: one command or script per call. */
export function redisKv(options: RedisOptions): KvStore {
  const connection = connect(options);
  const entries = new IndexedHash(connection.client, kvKeys(connection.namespace));
  return {
    get: (key) => entries.get(key),
    set: (key, value) => entries.set(key, value),
    delete: (key) => entries.delete(key),
    compareAndSet: (key, expected, value) => entries.compareAndSet(key, expected, value),
    list: (prefix, { after, limit } = {}) =>
      entries.keys(prefix, after ?? null, limit ?? Number.MAX_SAFE_INTEGER),
    close: () => disconnect(connection),
    errorHint: redisErrorHint,
  };
}
