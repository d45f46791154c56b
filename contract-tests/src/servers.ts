/**
 * `@ckpt/contract-tests/servers`: what a native backend's own tests add to the suite, most of
 * it for adapters of database servers: a proxy that cuts connections and the fault runs on it,
 * round-trip counting, many writers, calls at once, pool batches, namespaces used again across
 * cases, schema upgrades, opening only an existing store, connection options and a server that
 * does not answer; and the retention cases at the backend level.
 *
 * @module @ckpt/contract-tests/servers
 */
export { backendRetentionCases, type RetentionHarness } from './backend-retention.js';
export { CALLS_AT_ONCE_MAX_PAYLOAD, expectOwnOutcomesForCallsAtOnce } from './calls-at-once.js';
export { expectCursorExpired, firstEvents } from './cases/watch.js';
export {
  type ConnectionOptionsShape,
  expectBadConnectionOptionsRefused,
} from './connection-options.js';
export { type Direction, type FaultProxy, startFaultProxy } from './fault-proxy.js';
export { expectEveryRunStoredOnce, type FaultReport, runFaultInjection } from './fault-runs.js';
export { expectDistinctSeqsFromManyWriters } from './many-writers.js';
export {
  type NamespacePool,
  type NamespaceStorage,
  namespacePool,
  type PoolHarness,
} from './namespace-pool.js';
export {
  type ExistingStoreStorage,
  expectExistingStoreOpens,
  expectMissingStoreNotFound,
} from './open-existing.js';
export {
  type BatchingStore,
  expectOnlyTheRefusedCallOfABatchFails,
  type PoolBatchHarness,
  poolBatchCases,
} from './pool-batches.js';
export { type CallCounter, countCalls, expectOneStatementPerOperation } from './round-trips.js';
export { expectSilentServerNamed } from './silent-server.js';
export {
  expectOldSessionsReadWhole,
  expectUpgradedValuesReadAndWatched,
  type OldSchemaCalls,
  plainAndCompressedValues,
} from './upgrades.js';
