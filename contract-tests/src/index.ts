/**
 * The contract suite every ckpt backend must pass. Call `runContractTests(harness)` inside a
 * vitest test file; it registers one `describe` block with every case. Also the helpers of
 * server backends' tests: the fault proxy, fault runs, round-trip counting, schema upgrades,
 * namespaces used again across cases, opening only an existing store.
 *
 * @packageDocumentation
 * @module @ckpt/contract-tests
 */
import { describe } from 'vitest';
import { checkpointCases } from './cases/checkpoints.js';
import { codecCases } from './cases/codecs.js';
import { concurrencyCases } from './cases/concurrency.js';
import { destroyCases } from './cases/destroy.js';
import { idempotencyCases } from './cases/idempotency.js';
import { inputCases } from './cases/inputs.js';
import { lifecycleCases } from './cases/lifecycle.js';
import { listingCases } from './cases/listings.js';
import { modelCases } from './cases/model.js';
import { needsCases } from './cases/needs.js';
import { retentionCases } from './cases/retention.js';
import { stateCases } from './cases/state.js';
import { surfaceCases } from './cases/surface.js';
import { transferCases } from './cases/transfer.js';
import { valueCases } from './cases/values.js';
import { type ContractContext, type ContractHarness, useContext } from './harness.js';

export { CALLS_AT_ONCE_MAX_PAYLOAD, expectOwnOutcomesForCallsAtOnce } from './calls-at-once.js';
export {
  type ConnectionOptionsShape,
  expectBadConnectionOptionsRefused,
} from './connection-options.js';
export { type Direction, type FaultProxy, startFaultProxy } from './fault-proxy.js';
export { expectEveryRunStoredOnce, type FaultReport, runFaultInjection } from './fault-runs.js';
export type { ContractContext, ContractHarness } from './harness.js';
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
export { sessionReads, stateReads, storeReads } from './session-reads.js';
export { expectSilentServerNamed } from './silent-server.js';
export { expectOldSessionsReadWhole, type OldSchemaCalls } from './upgrades.js';
export { allPages, expectCkptError, INVALID_IDS, ODD_IDS } from './util.js';

/** Register the whole contract suite for the backend `harness` describes. */
export function runContractTests(harness: ContractHarness): void {
  describe(`ckpt contract: ${harness.name}`, { timeout: harness.timeout ?? 60_000 }, () => {
    const t: ContractContext = useContext(harness);
    const caps = harness.capabilities;
    checkpointCases(t);
    lifecycleCases(t);
    needsCases(t, caps);
    listingCases(t, caps);
    valueCases(t);
    inputCases(t, caps);
    idempotencyCases(t);
    stateCases(t, caps);
    concurrencyCases(t, caps, harness.connections ?? 4);
    transferCases(t, caps);
    retentionCases(t, caps);
    codecCases(t, caps);
    surfaceCases(t, caps, harness.namespaced !== undefined);
    destroyCases(t, caps, harness.namespaced !== undefined);
    modelCases(t, caps, harness.modelRuns ?? 200);
  });
}

export {
  checkpointCases,
  codecCases,
  concurrencyCases,
  destroyCases,
  idempotencyCases,
  inputCases,
  lifecycleCases,
  listingCases,
  modelCases,
  needsCases,
  retentionCases,
  stateCases,
  surfaceCases,
  transferCases,
  valueCases,
};
