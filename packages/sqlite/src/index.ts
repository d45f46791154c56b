/**
 * The SQLite backend and KV store on better-sqlite3: one file, WAL, crash-safe.
 *
 * @packageDocumentation
 * @module @ckpt/sqlite
 */

import { SqliteBackend } from './backend.js';
import type { SqliteOptions } from './connection.js';

export { SqliteBackend } from './backend.js';
export { BUSY_TIMEOUT_MS, type SqliteOptions, type Synchronous } from './connection.js';
export { sqliteKv } from './kv.js';
export { SCHEMA_VERSION } from './schema.js';

/** The SQLite backend: one file (or `':memory:'`), WAL, `synchronous = FULL` unless told otherwise. */
export function sqlite(options: SqliteOptions): SqliteBackend {
  return new SqliteBackend(options);
}
