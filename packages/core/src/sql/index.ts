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
  AGAIN,
  type BatchLease,
  type BatchLimits,
  type BatchOutcome,
  type BatchPool,
  BusyPoolBatches,
  DEFAULT_BATCH_LIMITS,
} from './busy-pool-batches.js';
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
  type AppendRow,
  appendResultFromRow,
  type BatchAppendRow,
  BatchCallError,
  batchAppendOutcomeFromRow,
  type CheckpointRow,
  checkpointFromRow,
  importedSessionRow,
  needsFromColumn,
  type SessionRow,
} from './rows.js';
export type { RunStatement, SqlResult } from './run.js';
export {
  appendProcedureArgs,
  needsArg,
  SqlBackend,
  type SqlBackendStatements,
  SqlProcedureBackend,
  type SqlProcedures,
  type SqlReads,
} from './sql-backend.js';
export { SQL_TABLES, type SqlTable, sqlTables } from './tables.js';
