import { runContractTests } from '@ckpt/contract-tests';
import { kvBackend } from '@ckpt/core';
import { memory, memoryKv } from '@ckpt/memory';

const ALL = { concurrentWriters: true, listSessions: true, listStateKeys: true };

runContractTests({ name: 'memory()', capabilities: ALL, create: () => memory() });

runContractTests({
  name: 'kvBackend(memoryKv())',
  capabilities: ALL,
  create: () => kvBackend(memoryKv()),
});
