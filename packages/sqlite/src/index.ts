/**
 * The SQLite backend and KV store on better-sqlite3: one file, WAL, crash-safe.
 *
 * @packageDocumentation
 * @module @ckpt/sqlite
 */
import type { SqliteOptions } from './open-database.js';
import { SqliteBackend } from './sqlite-backend.js';

export { BUSY_TIMEOUT_MS, type SqliteOptions, type Synchronous } from './open-database.js';
export { SCHEMA_VERSION } from './schema.js';
export { SqliteBackend } from './sqlite-backend.js';
export { sqliteKv } from './sqlite-kv.js';

/** The SQLite backend: one file (or `':memory:'`), WAL, `synchronous = FULL` unless told otherwise. */
export function sqlite(options: SqliteOptions): SqliteBackend {
  return new SqliteBackend(options);
}
