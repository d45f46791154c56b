/**
 * The SQL family: what the SQLite, PostgreSQL and MySQL backends share, written once. The
 * backend (`SqlBackend`), built from the parts an adapter hands it: a driver (`SqlDriver`:
 * run a statement, hold a connection, say what an error means), its reads, its writes as
 * statements (`SqlWriteStatements`) or as transactions of its own, its state table; statements
 * that carry their values' order beside their SQL (`named`); the rows those statements return;
 * the key-value table that serves both the state and the KV store; the migration runner; the
 * tables; and the rewriting of `$n` parameters for drivers that take `?`. Core runs the write
 * pipeline itself: retries, in-flight counting, group commit, the procedure calls.
 *
 * @packageDocumentation
 * @module @ckpt/core/sql
 */

export { appendBytes } from './batched-appends.js';
export { AGAIN, type BatchOutcome } from './busy-pool-batches.js';
export {
  type HeldConnection,
  retrying,
  type SqlConnections,
  type SqlDriver,
} from './driver.js';
export { type IdChangeLogReads, idChangeLog } from './id-change-log.js';
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
  needsArg,
  type PruneBatchValues,
  type PruneValues,
  type RollbackValues,
  type SqlProcedures,
} from './procedure-writes.js';
export {
  type RewriteBytes,
  type RewriteValues,
  rewriteBytes,
  rewriteValues,
} from './rewrite.js';
export {
  type AppendRow,
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
  tagsArg,
  tagsFromColumn,
} from './rows.js';
export type { RunStatement, SqlResult } from './run.js';
export {
  SqlBackend,
  type SqlBackendParts,
  type SqlReads,
  type SqlReadsWithChanges,
  type SqlWrites,
  type TaggedQuery,
  type TaggedShape,
} from './sql-backend.js';
export { named, prepareEach, type SqlStatement } from './statement.js';
export type {
  BatchCounts,
  SqlAppendBatch,
  SqlWriteStatements,
} from './statement-writes.js';
export { SQL_TABLES, type SqlTable, sqlTables } from './tables.js';
