/**
 * The Redis backend and KV store on ioredis: one Lua script per mutation, Redis Cluster ready.
 *
 * @packageDocumentation
 * @module @ckpt/redis
 */
import type { RedisOptions } from './connection.js';
import { RedisBackend } from './redis-backend.js';

export type { RedisOptions } from './connection.js';
export { SHARDS } from './keys.js';
export { RedisBackend } from './redis-backend.js';
export { redisKv } from './redis-kv.js';
export type { RedisClient } from './script.js';

/**
 * The Redis backend, on an ioredis client it opens from `url` (and closes) or on your
 * `client`, a `Redis` or a `Cluster` (left open).
 */
export function redis(options: RedisOptions): RedisBackend {
  return new RedisBackend(options);
}
