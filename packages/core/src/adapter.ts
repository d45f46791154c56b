/**
 * The adapter kit: what a backend author needs beyond the main entry. The native backend's
 * types, the common option rules of every adapter, the orderings every backend must agree on,
 * the closure of what kept checkpoints need, retrying a call the server rolled back, error
 * hints, and encoded values as bytes for backends that can hold bytes. The SQL family, shared
 * by the SQL backends, is `@ckpt/core/sql`.
 *
 * @packageDocumentation
 * @module @ckpt/core/adapter
 */

export { afterReady } from './adapter/after-ready.js';
export type {
  AppendInput,
  AppendResult,
  BackendCapabilities,
  BackendDeclarations,
  BackendLifecycle,
  ChangeKind,
  ChangeLog,
  ChangesPage,
  CheckpointBackend,
  CheckpointLog,
  CompleteBackend,
  DeleteIdleResult,
  DerivedMethod,
  Diagnosis,
  ExportedStoredCheckpoint,
  ForkInput,
  ForkResult,
  ImportInput,
  Leftovers,
  ListingMethod,
  PinResult,
  PruneRule,
  Retention,
  RewriteInput,
  RollbackInput,
  RollbackResult,
  SessionPosition,
  SessionTransfer,
  StateStore,
  StoredChange,
  StoredCheckpoint,
  StoredCheckpointInfo,
  StoredLineageEntry,
  StoredSession,
  Tags,
} from './adapter/backend.js';
export { logPosition, notThisLog, readLogPosition } from './adapter/change-positions.js';
export { capabilitiesOf, completeBackend } from './adapter/complete-backend.js';
export {
  type ConnectionSpec,
  type OpenedConnection,
  openConnection,
} from './adapter/connection-options.js';
export {
  durabilityDiagnosis,
  SURVIVES_SERVER_CRASH,
  schemaDiagnosis,
} from './adapter/diagnose.js';
export { checkNamespace, DEFAULT_NAMESPACE } from './adapter/namespace.js';
export { closeOverNeeds } from './adapter/needs.js';
export { type AdapterOpening, openAdapter } from './adapter/open-adapter.js';
export {
  checkCreate,
  type StoreLocation,
  storeNotFound,
  storeTooOld,
} from './adapter/open-existing.js';
export {
  compareSessionsNewestFirst,
  prefixUpperBound,
  sessionIdPrefixBound,
} from './adapter/order.js';
export { pruneSideBySide } from './adapter/prune-batch.js';
export { ROLLED_BACK_ATTEMPTS, retryRolledBack } from './adapter/retry.js';
export {
  CONNECT_TIMEOUT_MS,
  hintsByCode,
  type OtherServerSymptom,
  otherServerHint,
  SERVER_HINTS,
  urlAddress,
} from './adapter/server-hints.js';
export {
  storedBytesOf,
  storedBytesOrText,
  textFromStoredBytes,
} from './adapter/stored-bytes.js';
export { codecLabelsOf } from './codecs/chain.js';
export { type ErrorHint, errorCode, invalidArgument, redactPasswords } from './values/errors.js';
export { tagsMatch } from './values/tags.js';
export { checkOptions } from './values/validate.js';
