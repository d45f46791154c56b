/**
 * The contract suite every ckpt backend must pass. Call `runContractTests(harness)` inside a
 * vitest test file; it registers one `describe` block with every case. `runKvStoreTests`
 * checks a `KvStore` method by method, and the read helpers gather what a store reads for one
 * comparison. What native backends of database servers add is in `@ckpt/contract-tests/servers`.
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
import { tagCases } from './cases/tags.js';
import { transferCases } from './cases/transfer.js';
import { valueCases } from './cases/values.js';
import { watchCases } from './cases/watch.js';
import { type ContractContext, type ContractHarness, useContext } from './harness.js';

export type { ContractHarness } from './harness.js';
export { type KvStoreHarness, runKvStoreTests } from './kv-store-cases.js';
export { sessionReads, stateReads, storeReads } from './session-reads.js';
export { allPages, expectCkptError, INVALID_IDS, ODD_IDS } from './util.js';

/** The groups of cases the suite runs, in its order, each given the context and the harness. */
const GROUPS = {
  checkpoints: (t) => checkpointCases(t),
  lifecycle: (t) => lifecycleCases(t),
  needs: (t, h) => needsCases(t, h.capabilities),
  listings: (t, h) => listingCases(t, h.capabilities),
  values: (t) => valueCases(t),
  inputs: (t, h) => inputCases(t, h.capabilities),
  idempotency: (t) => idempotencyCases(t),
  state: (t, h) => stateCases(t, h.capabilities),
  concurrency: (t, h) => concurrencyCases(t, h.capabilities, h.connections ?? 4),
  transfer: (t, h) => transferCases(t, h.capabilities),
  retention: (t, h) => retentionCases(t, h.capabilities),
  codecs: (t, h) => codecCases(t, h.capabilities),
  surface: (t, h) => surfaceCases(t, h.capabilities, h.namespaced !== undefined),
  destroy: (t, h) => destroyCases(t, h.capabilities, h.namespaced !== undefined),
  watch: (t, h) => watchCases(t, h.capabilities),
  tags: (t, h) => tagCases(t, h.capabilities, h.namespaced !== undefined),
  model: (t, h) => modelCases(t, h.capabilities, h.modelRuns ?? 200),
} satisfies Record<string, (t: ContractContext, harness: ContractHarness) => void>;

/** The name of a group of cases, for `runContractTests(harness, { groups })`. */
export type CaseGroup = keyof typeof GROUPS;

/**
 * Register the contract suite for the backend `harness` describes: every group of cases, or
 * only `options.groups`.
 */
export function runContractTests(
  harness: ContractHarness,
  options: { groups?: readonly CaseGroup[] } = {},
): void {
  const names = Object.keys(GROUPS) as CaseGroup[];
  const groups = options.groups ?? names;
  const unknown = groups.filter((group) => !names.includes(group));
  if (unknown.length > 0) {
    throw new Error(
      `runContractTests: no group named ${unknown.map((g) => JSON.stringify(g)).join(', ')}; the groups are ${names.join(', ')}.`,
    );
  }
  describe(`ckpt contract: ${harness.name}`, { timeout: harness.timeout ?? 60_000 }, () => {
    const t = useContext(harness);
    for (const group of names) if (groups.includes(group)) GROUPS[group](t, harness);
  });
}
