/** The suite passes on the reference backends, in both KV profiles. */

import { runContractTests, runKvStoreTests } from '@ckpt/contract-tests';
import { type CheckpointBackend, compareCodePoints, type KvStore, kvBackend } from '@ckpt/core';
import { memory, memoryKv } from '@ckpt/memory';

const ALL = {
  concurrentWriters: true,
  listSessions: true,
  listStateKeys: true,
  watch: false,
  tags: false,
};
/** What kvBackend does on a KV with a conditional write and list: ALL, and tags. */
const KV = { ...ALL, tags: true };

/** A KV with only the three required methods: the single-writer profile. */
function minimalKv(): KvStore {
  const full = memoryKv();
  return { get: full.get, set: full.set, delete: full.delete };
}

runContractTests({
  name: 'memory() reference',
  capabilities: { ...ALL, watch: true, tags: true },
  create: () => memory(),
});

runContractTests({
  name: 'kvBackend over get/set/delete/compareAndSet/list',
  capabilities: KV,
  create: () => kvBackend(memoryKv()),
});

/**
 * A KV in the conventions of Redis clients: null for a missing key, 1 or 0 for delete and
 * compareAndSet. kvBackend reads those as undefined and booleans.
 */
function nullAnsweringKv(): KvStore {
  const full = memoryKv();
  return {
    get: async (key) => (await full.get(key)) ?? (null as never),
    set: (key, value) => full.set(key, value),
    delete: async (key) => ((await full.delete(key)) ? 1 : 0) as never,
    compareAndSet: async (key, expected, value) =>
      ((await full.compareAndSet!(key, expected, value)) ? 1 : 0) as never,
    list: (prefix, options) => full.list!(prefix, options),
  };
}

runContractTests({
  name: 'kvBackend over a KV that answers null, 1 and 0',
  capabilities: KV,
  create: () => kvBackend(nullAnsweringKv()),
});

/**
 * A KV in the versioned form, as stores that compare revisions have it: getWithVersion and
 * setIfVersion in place of compareAndSet.
 */
function versionedKv(): KvStore {
  // Each method reads and writes the map in one step, as a store's own conditional write does.
  const cells = new Map<string, { value: string; version: number }>();
  let version = 0;
  return {
    get: async (key) => cells.get(key)?.value,
    set: async (key, value) => void cells.set(key, { value, version: ++version }),
    delete: async (key) => cells.delete(key),
    getWithVersion: async (key) => cells.get(key),
    async setIfVersion(key, value, expected) {
      if ((cells.get(key)?.version ?? null) !== expected) return false;
      cells.set(key, { value, version: ++version });
      return true;
    },
    list: async (prefix, options) =>
      [...cells.keys()]
        .filter((key) => key.startsWith(prefix) && compareCodePoints(key, options?.after ?? '') > 0)
        .sort(compareCodePoints)
        .slice(0, options?.limit),
  };
}

runContractTests({
  name: 'kvBackend over get/set/delete/getWithVersion/setIfVersion/list',
  capabilities: KV,
  create: () => kvBackend(versionedKv()),
});

runContractTests({
  name: 'kvBackend over get/set/delete only (single writer)',
  capabilities: {
    concurrentWriters: false,
    listSessions: false,
    listStateKeys: false,
    watch: false,
    tags: true,
  },
  create: () => kvBackend(minimalKv()),
});

runKvStoreTests({ name: 'memoryKv()', create: () => memoryKv() });
runKvStoreTests({ name: 'a KV that answers null, 1 and 0', create: nullAnsweringKv });
runKvStoreTests({ name: 'a versioned KV', create: versionedKv });
runKvStoreTests({ name: 'get/set/delete only', create: minimalKv });

/** The methods core cannot derive, which every native backend writes (see completeBackend). */
const REQUIRED = [
  'append',
  'load',
  'loadByKey',
  'session',
  'rollback',
  'prune',
  'delete',
  'stateGet',
  'stateSet',
  'stateDelete',
  'stateCompareAndSet',
  'exportCheckpoints',
  'importSession',
  'pin',
  'unpin',
  'deleteIdle',
  'close',
] as const;

/**
 * memory() as a native backend that writes only the required methods (and the listings, with
 * `listings`): listCheckpoints, lineage and fork are core's defaults, checked as a native
 * method is.
 */
function requiredOnly(listings: boolean): CheckpointBackend {
  const full = memory();
  const methods = [
    ...REQUIRED,
    ...(listings ? (['sessions', 'stateKeys', 'stateScopes'] as const) : []),
  ];
  return {
    name: 'required-only',
    capabilities: { concurrentWriters: true },
    ...Object.fromEntries(
      methods.map((method) => [method, (full[method] as (...args: never) => unknown).bind(full)]),
    ),
  } as CheckpointBackend;
}

runContractTests({
  name: 'a native backend of the required methods and the listings',
  capabilities: ALL,
  create: () => requiredOnly(true),
});

runContractTests({
  name: 'a native backend of the required methods alone',
  capabilities: {
    concurrentWriters: true,
    listSessions: false,
    listStateKeys: false,
    watch: false,
    tags: false,
  },
  create: () => requiredOnly(false),
});
