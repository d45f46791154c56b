/**
 * The `CheckpointStore` API, its errors, the KV contract with `kvBackend`, `openStore(url)` and the native backend interface.
 *
 * @packageDocumentation
 * @module @ckpt/core
 */
export type {
  AppendInput,
  AppendResult,
  BackendCapabilities,
  CheckpointBackend,
  ForkInput,
  ForkResult,
  RollbackInput,
  RollbackResult,
  SessionPosition,
  StoredCheckpoint,
  StoredCheckpointInfo,
  StoredLineageEntry,
  StoredSession,
} from './backend.js';
export {
  type ConnectionSpec,
  type OpenedConnection,
  openConnection,
} from './connection-options.js';
export {
  CkptError,
  type CkptErrorCode,
  type CkptErrorDetails,
  errorCode,
  invalidArgument,
  isCkptError,
  redactPasswords,
} from './errors.js';
export type { KvStore } from './kv.js';
export { type KvBackendOptions, kvBackend } from './kv-backend.js';
export { checkNamespace, DEFAULT_NAMESPACE } from './namespace.js';
export { openStore } from './open-store.js';
export { compareCodePoints, compareSessionsNewestFirst, prefixUpperBound } from './order.js';
export { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './paging.js';
export { ROLLED_BACK_ATTEMPTS, retryRolledBack } from './retry.js';
export { type FoundSchema, migrationStart } from './schema-version.js';
export {
  rangesAppend,
  rangesCount,
  rangesDescending,
  rangesFrom,
  rangesHas,
  rangesPrune,
  type SeqRanges,
} from './seq-ranges.js';
export {
  SqlBackend,
  type SqlResult,
  type SqlStatementName,
  type SqlStatements,
} from './sql-backend.js';
export {
  type AppendRow,
  appendResultFromRow,
  type CheckpointRow,
  checkpointFromRow,
  checkpointInfoFromRow,
  forkResultFromRow,
  type LineageRow,
  lineageFromRow,
  procedureArgs,
  rollbackResultFromRow,
  type SessionRow,
  SQL_TABLES,
  sessionFromRow,
  sqlTables,
} from './sql-rows.js';
export { CheckpointStore, DEFAULT_MAX_PAYLOAD_BYTES } from './store.js';
export type {
  Checkpoint,
  CheckpointInfo,
  CheckpointOptions,
  JsonValue,
  Metadata,
  Page,
  PageOptions,
  SessionInfo,
  StateScope,
  StoreOptions,
  TranscriptEntry,
  UpdateOptions,
} from './types.js';
export { checkOptions } from './validate.js';
