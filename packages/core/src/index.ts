/**
 * Durable, versioned checkpoints for AI-agent sessions: the `CheckpointStore` API, its errors,
 * `openStore(url)`, and the KV contract with `kvBackend`. Backend authors find the rest of
 * what they need in `@ckpt/core/adapter` (and, for SQL, `@ckpt/core/sql`).
 *
 * @packageDocumentation
 * @module @ckpt/core
 */
export type {
  BackendCapabilities,
  ChangeKind,
  CheckpointBackend,
  Diagnosis,
  Leftovers,
} from './adapter/backend.js';
export { MAX_NEEDS } from './adapter/needs.js';
export { compareCodePoints } from './adapter/order.js';
export type { Codec } from './codecs/codec.js';
export { type CompressionKind, compress } from './codecs/compress.js';
export { type EncryptOptions, encrypt } from './codecs/encrypt.js';
export { type KvBackendOptions, kvBackend } from './kv/kv-backend.js';
export type { KvChange, KvChangesPage, KvStore } from './kv/kv-store.js';
export { DEFAULT_PAGE_LIMIT, MAX_PAGE_LIMIT } from './store/paging.js';
export type {
  ReencodeOptions,
  ReencodeProgress,
  ReencodeResult,
} from './store/reencode.js';
export {
  type PruneOptions,
  RETENTION_INTERVAL,
  type RetentionPolicy,
  type SweepOptions,
  type SweepProgress,
  type SweepResult,
} from './store/retention.js';
export { CheckpointStore, DEFAULT_MAX_PAYLOAD_BYTES } from './store/store.js';
export type {
  Checkpoint,
  CheckpointInfo,
  CheckpointOptions,
  ExportedCheckpoint,
  ImportOptions,
  ListOptions,
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
} from './store/types.js';
export type { ChangeEvent, ChangeStream, WatchOptions } from './store/watch.js';
export {
  EXPORT_FORMAT,
  EXPORT_VERSION,
  type ExportOptions,
  exportStore,
  type ImportStoreOptions,
  importStore,
  type TransferCounts,
} from './tools/export-format.js';
export { openStore } from './tools/open-store.js';
export { type CopyOptions, copyStore } from './tools/store-copy.js';
export { type StoreInUse, useStore } from './tools/store-or-url.js';
export { allItems, allSessionIds, allStateEntries } from './tools/store-walk.js';
export {
  CkptError,
  type CkptErrorCode,
  type CkptErrorDetails,
  isCkptError,
} from './values/errors.js';
export type { JsonCompatible, JsonInput, JsonValue, Metadata } from './values/json.js';
export {
  checkTags,
  MAX_TAG_KEY_LENGTH,
  MAX_TAG_VALUE_BYTES,
  MAX_TAGS,
  type Tags,
} from './values/tags.js';
