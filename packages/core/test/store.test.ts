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

  it('closes its backend only after the calls in flight settle, failed ones included', async () => {
    const events: string[] = [];
    let fail: (err: Error) => void = () => {};
    let succeed: () => void = () => {};
    const backend = Object.assign(Object.create(memory()), {
      load: () =>
        new Promise((_, reject) => {
          fail = reject;
        }),
      session: () =>
        new Promise((resolve) => {
          succeed = () => {
            events.push('info answered');
            resolve(null);
          };
        }),
      close: async () => void events.push('backend closed'),
    });
    const store = new CheckpointStore(backend);
    const failing = store.load('s').catch((err) => events.push(`load ${err.code}`));
    const passing = store.info('s').then((info) => events.push(`info ${info}`));
    const closing = store.close().then(() => events.push('store closed'));
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(events).toEqual([]);
    fail(new Error('connection reset'));
    await failing;
    await new Promise((resolve) => setTimeout(resolve, 10));
    expect(events).toEqual(['load BACKEND']);
    succeed();
    await Promise.all([passing, closing]);
    expect(events).toContain('info null');
    expect(events.filter((e) => e !== 'info null')).toEqual([
      'load BACKEND',
      'info answered',
      'backend closed',
      'store closed',
    ]);
  });
});
