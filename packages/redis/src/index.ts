/**
 * The Redis backend and KV store on ioredis: one Lua script per mutation, Redis Cluster ready.
 *
 * @packageDocumentation
 * @module @ckpt/redis
 */

import { RedisBackend } from './backend.js';
import type { RedisOptions } from './connection.js';

export { RedisBackend } from './backend.js';
export type { RedisOptions } from './connection.js';
export { redisKv } from './kv.js';
export type { RedisClient } from './runner.js';
export { SHARDS } from './schema.js';

/**
 * The Redis backend, on an ioredis client it opens from `url` (and closes) or on your
 * `client`, a `Redis` or a `Cluster` (left open).
 */
export function redis(options: RedisOptions): RedisBackend {
  return new RedisBackend(options);
}
