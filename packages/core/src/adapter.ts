/**
 * The adapter kit: what a backend author needs beyond the main entry. The native backend's
 * types, the common option rules of every adapter, the orderings every backend must agree on,
 * the closure of what kept checkpoints need, retrying a call the server rolled back, and error
 * hints. The SQL family, shared by the SQL backends, is `@ckpt/core/sql`.
 *
 * @packageDocumentation
 * @module @ckpt/core/adapter
 */

export {
  durabilityDiagnosis,
  SURVIVES_SERVER_CRASH,
  schemaDiagnosis,
} from './adapter-diagnose.js';
export { type AdapterOpening, openAdapter } from './adapter-open.js';
export { afterReady } from './after-ready.js';
export type {
  AppendInput,
  AppendResult,
  BackendCapabilities,
  CheckpointBackend,
  Diagnosis,
  ExportedStoredCheckpoint,
  ForkInput,
  ForkResult,
  ImportInput,
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
export { type ErrorHint, errorCode, invalidArgument, redactPasswords } from './errors.js';
export { checkNamespace, DEFAULT_NAMESPACE } from './namespace.js';
export { closeOverNeeds } from './needs.js';
export {
  checkCreate,
  type StoreLocation,
  storeNotFound,
  storeTooOld,
} from './open-existing.js';
export {
  compareSessionsNewestFirst,
  prefixUpperBound,
  sessionIdPrefixBound,
} from './order.js';
export { ROLLED_BACK_ATTEMPTS, retryRolledBack } from './retry.js';
export {
  hintsByCode,
  type OtherServerSymptom,
  otherServerHint,
  SERVER_HINTS,
  urlAddress,
} from './server-hints.js';
export { checkOptions } from './validate.js';
