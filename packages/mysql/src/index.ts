/**
 * The MySQL 8 / MariaDB 10.11+ backend and KV store on mysql2.
 *
 * @packageDocumentation
 * @module @ckpt/mysql
 */

import { MysqlBackend } from './backend.js';
import type { MysqlOptions } from './connection.js';

export { MysqlBackend } from './backend.js';
export type { MysqlOptions } from './connection.js';
export { mysqlKv } from './kv.js';
export { SCHEMA_VERSION } from './schema.js';

/** The MySQL / MariaDB backend, on a pool it opens from `url` (and closes) or on your `pool` (left open). */
export function mysql(options: MysqlOptions): MysqlBackend {
  return new MysqlBackend(options);
}
