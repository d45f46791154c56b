import { runContractTests } from '@ckpt/contract-tests';
import { isCkptError, kvBackend } from '@ckpt/core';
import { memory, memoryKv } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';

const ALL = {
  concurrentWriters: true,
  listSessions: true,
  listStateKeys: true,
  watch: false,
  tags: false,
};

runContractTests({
  name: 'memory()',
  capabilities: { ...ALL, watch: true, tags: true },
  create: () => memory(),
});

runContractTests({
  name: 'kvBackend(memoryKv())',
  capabilities: { ...ALL, tags: true },
  create: () => kvBackend(memoryKv()),
});

describe('memory options', () => {
  it('refuses a misspelt option, which would otherwise leave the namespace at ckpt', () => {
    for (const factory of [memory, memoryKv]) {
      let refused: unknown;
      try {
        factory({ namepsace: 'agents' } as never);
      } catch (err) {
        refused = err;
      }
      expect(isCkptError(refused, 'INVALID_ARGUMENT')).toBe(true);
      expect((refused as Error).message).toBe(
        `${factory.name}() options has no option "namepsace"; the options are namespace and create.`,
      );
    }
  });
});
