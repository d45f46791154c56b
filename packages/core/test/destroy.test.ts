/** `CheckpointStore.destroy()` over any backend, and `kvBackend`'s destroy. */

import { expectCkptError } from '@ckpt/contract-tests';
import { memory, memoryKv } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import { type CheckpointBackend, CheckpointStore, kvBackend } from '../src/index.js';
import { around } from './support/around.js';

/** A memory backend whose destroy and close are counted, and whose destroy may fail. */
function counted(fails?: Error) {
  const events: string[] = [];
  const inner = memory();
  const backend = around(inner, {
    append: async (input: Parameters<CheckpointBackend['append']>[0]) => {
      const result = await inner.append(input);
      events.push('written');
      return result;
    },
    destroy: async () => {
      events.push('destroy');
      if (fails) throw fails;
      await inner.destroy();
    },
    close: async () => void events.push('close'),
  });
  return { backend, events };
}

describe('CheckpointStore.destroy()', () => {
  it('removes every session and state value, then closes the store: later calls fail with CLOSED', async () => {
    const backend = memory();
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', 1);
    await store.state('x').set('k', 1);
    await store.destroy();
    await expectCkptError(store.load('s'), 'CLOSED');
    await expectCkptError(store.destroy(), 'CLOSED');
    const again = new CheckpointStore(backend);
    expect(await again.load('s')).toBeNull();
    expect(await again.state('x').get('k')).toBeUndefined();
  });

  it('destroys once the calls in flight settle, then closes the backend once', async () => {
    const { backend, events } = counted();
    const store = new CheckpointStore(backend);
    const writing = store.checkpoint('s', 1);
    const destroying = store.destroy();
    await expectCkptError(store.load('s'), 'CLOSED');
    await destroying;
    await writing;
    await store.close();
    expect(events).toEqual(['written', 'destroy', 'close']);
  });

  it('raises UNSUPPORTED for a backend without destroy(), removing nothing and staying open', async () => {
    const backend = memory();
    const without = around(backend, { destroy: undefined });
    const store = new CheckpointStore(without);
    await store.checkpoint('s', 1);
    const err = await expectCkptError(store.destroy(), 'UNSUPPORTED');
    expect(err.message).toBe(
      'destroy() is not supported by the memory backend, which has no destroy(); nothing was removed and the store is still open.',
    );
    expect((await store.load('s'))?.data).toBe(1);
  });

  it('reports a failed destroy as BACKEND with the cause, and still closes the store', async () => {
    const cause = new Error('disk on fire');
    const { backend, events } = counted(cause);
    const store = new CheckpointStore(backend);
    const err = await expectCkptError(store.destroy(), 'BACKEND');
    expect(err.cause).toBe(cause);
    expect(events).toEqual(['destroy', 'close']);
    await expectCkptError(store.load('s'), 'CLOSED');
  });
});

describe("kvBackend's destroy()", () => {
  it('deletes every key under its prefix, and only those', async () => {
    const kv = memoryKv();
    await kv.set('other:kept', 'v');
    await kv.set('ckpt;also kept', 'v');
    const store = new CheckpointStore(kvBackend(kv));
    for (let i = 0; i < 1200; i++) await store.state('many').set(`k${i}`, i);
    await store.checkpoint('s', 1, { transcript: ['t'], idempotencyKey: 'k' });
    await store.destroy();
    expect(await kv.list!('')).toEqual(['ckpt;also kept', 'other:kept']);
  });

  it('is UNSUPPORTED on a KvStore without list(), which could not find every key', async () => {
    const all = memoryKv();
    const store = new CheckpointStore(
      kvBackend({ get: all.get, set: all.set, delete: all.delete }),
    );
    await store.checkpoint('s', 1);
    await expectCkptError(store.destroy(), 'UNSUPPORTED');
    expect((await store.load('s'))?.data).toBe(1);
  });
});
