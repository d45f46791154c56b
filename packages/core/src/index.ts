/**
 * Durable, versioned checkpoints for AI-agent sessions: the `CheckpointStore` API, its errors,
 * `openStore(url)`, and the KV contract with `kvBackend`. Backend authors find the rest of
 * what they need in `@ckpt/core/adapter` (and, for SQL, `@ckpt/core/sql`).
 *
 * @packageDocumentation
 * @module @ckpt/core
 */
export type { BackendCapabilities, CheckpointBackend, Diagnosis } from './backend.js';
export { CkptError, type CkptErrorCode, type CkptErrorDetails, isCkptError } from './errors.js';
export {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type ExportOptions,
  exportStore,
  type ImportStoreOptions,
  importStore,
  type TransferCounts,
} from './export-format.js';
export type { KvStore } from './kv.js';
export { type KvBackendOptions, kvBackend } from './kv-backend.js';
export { MAX_NEEDS } from './needs.js';
export { openStore } from './open-store.js';
export { compareCodePoints } from './order.js';
export { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './paging.js';
export { CheckpointStore, DEFAULT_MAX_PAYLOAD_BYTES } from './store.js';
export { type CopyOptions, copyStore } from './store-copy.js';
export { type StoreInUse, useStore } from './store-or-url.js';
export { allItems, allSessionIds, allStateEntries } from './store-walk.js';
export type {
  Checkpoint,
  CheckpointInfo,
  CheckpointOptions,
  ExportedCheckpoint,
  ImportOptions,
  JsonCompatible,
  JsonInput,
  JsonValue,
  ListOptions,
  Metadata,
  OpenStoreOptions,
  Page,
  PageOptions,
  SessionExport,
  SessionImport,
  SessionInfo,
  SessionsOptions,
  StateScope,
  StoreOptions,
  TranscriptEntry,
  UpdateOptions,
} from './types.js';
