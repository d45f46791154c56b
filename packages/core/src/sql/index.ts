/**
 * The SQL family: what the SQLite, PostgreSQL and MySQL backends share, written once. The
 * backend's reads and state on one statement each (`SqlBackend`), and its mutations as
 * procedure calls (`SqlProcedureBackend`); the rows those statements return; the key-value
 * table that serves both the state and the KV store; the migration runner; the tables; and
 * the rewriting of `$n` parameters for drivers that take `?`.
 *
 * @packageDocumentation
 * @module @ckpt/core/sql
 */
export {
  type KeyValueSql,
  type KeyValueStatements,
  KeyValueTable,
  keyValueSql,
  keyValueStore,
} from './key-value-table.js';
export { type MaybePromise, type Migration, migrate } from './migrate.js';
export { type Positional, positional, positionalValues } from './positional.js';
export {
  type CheckpointRow,
  checkpointFromRow,
  type SessionRow,
} from './rows.js';
export type { RunStatement, SqlResult } from './run.js';
export {
  SqlBackend,
  type SqlBackendStatements,
  SqlProcedureBackend,
  type SqlProcedures,
  type SqlReads,
} from './sql-backend.js';
export { SQL_TABLES, type SqlTable, sqlTables } from './tables.js';
