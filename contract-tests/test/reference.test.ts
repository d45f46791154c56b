/** The suite passes on the reference backends, in both KV profiles. */

import { runContractTests } from '@ckpt/contract-tests';
import { type KvStore, kvBackend } from '@ckpt/core';
import { memory, memoryKv } from '@ckpt/memory';

const ALL = { concurrentWriters: true, listSessions: true, listStateKeys: true };

/** A KV with only the three required methods: the single-writer profile. */
function minimalKv(): KvStore {
  const full = memoryKv();
  return { get: full.get, set: full.set, delete: full.delete };
}

runContractTests({ name: 'memory() reference', capabilities: ALL, create: () => memory() });

runContractTests({
  name: 'kvBackend over get/set/delete/compareAndSet/list',
  capabilities: ALL,
  create: () => kvBackend(memoryKv()),
});

runContractTests({
  name: 'kvBackend over get/set/delete only (single writer)',
  capabilities: { concurrentWriters: false, listSessions: false, listStateKeys: false },
  create: () => kvBackend(minimalKv()),
});
