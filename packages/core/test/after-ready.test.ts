/** `afterReady`: a backend's calls held until it is ready. */
import { memory } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import { afterReady } from '../src/adapter.js';
import { CheckpointStore, CkptError } from '../src/index.js';

describe('afterReady(backend, ready)', () => {
  it('holds every call until ready resolves, then runs it on the backend itself', async () => {
    let settle = () => {};
    const inner = memory();
    const backend = afterReady(inner, new Promise<void>((resolve) => (settle = resolve)));
    const store = new CheckpointStore(backend);
    let written = false;
    const writing = store.checkpoint('s', 1).then(() => (written = true));
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(written).toBe(false);
    expect(await inner.session('s')).toBeNull();
    settle();
    await writing;
    expect((await inner.load('s', null))?.data).toBe('1');
    expect(backend.namespace).toBe('ckpt');
  });

  it('fails every call with the error ready rejects with, and none reaches the backend', async () => {
    const missing = new CkptError('NOT_FOUND', 'there is no ckpt store here.');
    const inner = memory();
    const store = new CheckpointStore(afterReady(inner, Promise.reject(missing)));
    for (const call of [() => store.checkpoint('s', 1), () => store.state('x').set('k', 1)]) {
      const err = await call().catch((e: unknown) => e);
      expect(err).toBe(missing);
    }
    expect(await inner.session('s')).toBeNull();
    expect(await inner.stateGet('x', 'k')).toBeUndefined();
  });

  it('closes at once, without waiting for a ready that never settles', async () => {
    const backend = afterReady(memory(), new Promise<void>(() => {}));
    await expect(backend.close()).resolves.toBeUndefined();
  });
});
