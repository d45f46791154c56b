/**
 * The SQL family: what the SQLite, PostgreSQL and MySQL backends share, written once. The
 * backend (`SqlBackend`), built from the parts an adapter hands it: a runner, its reads, its
 * writes, its state table; the mutations as procedure calls (`procedureWrites`); statements
 * that carry their values' order beside their SQL (`named`); the rows those statements return;
 * the key-value table that serves both the state and the KV store; group commit; the migration
 * runner; the tables; and the rewriting of `$n` parameters for drivers that take `?`.
 *
 * @packageDocumentation
 * @module @ckpt/core/sql
 */

export { appendBytes, type BatchedAppends, batchedAppends } from './batched-appends.js';
export {
  AGAIN,
  type BatchLease,
  type BatchLimits,
  type BatchOutcome,
  type BatchPool,
  BusyPoolBatches,
  DEFAULT_BATCH_LIMITS,
} from './busy-pool-batches.js';
export { countInFlight } from './in-flight.js';
export {
  type KeyValueSql,
  type KeyValueStatements,
  KeyValueTable,
  keyValueSql,
  keyValueStore,
  prepareKeyValue,
  type ValueColumn,
} from './key-value-table.js';
export { type MaybePromise, type Migration, migrate } from './migrate.js';
export { type Positional, positional, positionalValues } from './positional.js';
export {
  type AppendValues,
  appendOutcome,
  appendValues,
  needsArg,
  type PruneValues,
  procedureWrites,
  type RollbackValues,
  type SqlProcedures,
} from './procedure-writes.js';
export {
  type RewriteBytes,
  type RewriteValues,
  rewriteBytes,
  rewriteValues,
  statementRewrite,
} from './rewrite.js';
export {
  type AppendRow,
  appendResultFromRow,
  type BatchAppendRow,
  BatchCallError,
  batchAppendOutcomeFromRow,
  type CheckpointRow,
  checkpointFromRow,
  importedPins,
  importedSessionRow,
  needsFromColumn,
  type SessionRow,
  type StoredValue,
} from './rows.js';
export type { RunStatement, SqlResult } from './run.js';
export {
  SqlBackend,
  type SqlBackendParts,
  type SqlReads,
  type SqlRunner,
  type SqlWrites,
} from './sql-backend.js';
export { named, prepareEach, type SqlStatement } from './statement.js';
export { SQL_TABLES, type SqlTable, sqlTables } from './tables.js';
