import { memory } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import { CheckpointStore, isCkptError } from '../src/index.js';

describe('CheckpointStore', () => {
  it('refuses to be built without a backend, saying what to pass', () => {
    let err: unknown;
    try {
      new CheckpointStore(undefined as never);
    } catch (e) {
      err = e;
    }
    expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
    expect((err as Error).message).toMatch(/memory\(\)/);
  });

  it('bounds the cost of a transcript page when few checkpoints carry items', async () => {
    const store = new CheckpointStore(memory());
    await store.checkpoint('s', 0, { transcript: ['the only item'] });
    for (let i = 1; i <= 1500; i++) await store.checkpoint('s', i);
    const first = await store.transcript('s', { limit: 10 });
    // The walk stops after its budget of checkpoints and hands back a cursor to go on.
    expect(first.items).toEqual([]);
    expect(first.cursor).not.toBeNull();
    const second = await store.transcript('s', { limit: 10, cursor: first.cursor });
    expect(second.items.map((e) => e.item)).toEqual(['the only item']);
    expect(second.cursor).toBeNull();
  });

  it('closes its backend once', async () => {
    let closed = 0;
    const backend = Object.assign(Object.create(memory()), { close: async () => void closed++ });
    const store = new CheckpointStore(backend);
    await store.close();
    await store.close();
    expect(closed).toBe(1);
  });
});
