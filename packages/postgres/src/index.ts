/**
 * The PostgreSQL backend and KV store on pg: one round trip per mutation, pooler-safe.
 *
 * @packageDocumentation
 * @module @ckpt/postgres
 */

import { PostgresBackend } from './backend.js';
import type { PostgresOptions } from './connection.js';

export { PostgresBackend } from './backend.js';
export type { PostgresOptions } from './connection.js';
export { postgresKv } from './kv.js';
export { SCHEMA_VERSION } from './schema.js';

/** The PostgreSQL backend, on a pool it opens from `url` (and closes) or on your `pool` (left open). */
export function postgres(options: PostgresOptions): PostgresBackend {
  return new PostgresBackend(options);
}
