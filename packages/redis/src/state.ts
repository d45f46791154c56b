/**
 * The state store: each scope an indexed hash (see indexed-hash.ts) on its shard's slot, listed
 * in its shard's catalog of scopes while it holds a key (see schema.ts). Listing the scopes is
 * a read (see reads.ts).
 */
import { IndexedHash } from './indexed-hash.js';
import type { RedisNamespace } from './runner.js';
import { stateKeys } from './schema.js';

/** The values of one state scope, read and written by key. */
export function scopeState(on: RedisNamespace, scope: string): IndexedHash {
  return new IndexedHash(on.client, stateKeys(on.namespace, scope), 'bytes');
}
