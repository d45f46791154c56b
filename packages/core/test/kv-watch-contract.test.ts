/**
 * The contract suite on kvBackend over a KV store that keeps a log of its writes: every group,
 * the watch group among them, on the reference store with every method; and the watch group on
 * one with only get, set, delete and its log (no conditional write, no list), since the log
 * alone is what watch() needs.
 */
import { runContractTests } from '@ckpt/contract-tests';
import type { CheckpointBackend, KvStore } from '../src/index.js';
import { kvBackend } from '../src/index.js';
import { loggedKv } from './support/logged-kv.js';

/** kvBackend on `kv`, remembering it, so that connect() opens another backend on the same store. */
function harnessOf(makeKv: () => KvStore) {
  const stores = new WeakMap<CheckpointBackend, KvStore>();
  const open = (kv: KvStore) => {
    const backend = kvBackend(kv);
    stores.set(backend, kv);
    return backend;
  };
  return {
    create: () => open(makeKv()),
    connect: (backend: CheckpointBackend) => open(stores.get(backend)!),
  };
}

runContractTests({
  name: 'kvBackend over a KV with a log of its writes',
  capabilities: {
    concurrentWriters: true,
    listSessions: true,
    listStateKeys: true,
    watch: true,
    tags: true,
  },
  ...harnessOf(() => loggedKv().kv),
});

runContractTests(
  {
    name: 'kvBackend over get/set/delete and a log of writes',
    capabilities: {
      concurrentWriters: false,
      listSessions: false,
      listStateKeys: false,
      watch: true,
      tags: true,
    },
    ...harnessOf(() => {
      const { get, set, delete: remove, changes } = loggedKv().kv;
      return { get, set, delete: remove, changes };
    }),
  },
  { groups: ['watch'] },
);
