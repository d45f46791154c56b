/**
 * kvBackend's append on a store in the versioned form: the calls a checkpoint makes, appends
 * that meet each other's bodies, and a caller cut short after any of its calls.
 */
import { describe, expect, it } from 'vitest';
import { CheckpointStore, kvBackend } from '../src/index.js';
import { failingAt } from './support/failing-kv.js';
import { versionedKv } from './support/versioned-kv.js';

/**
 * A store on a versioned KV holding checkpoints `data` in session `s`, and `holdAppend`: an
 * append to `s` held once it has written its body, before it swaps the record.
 */
async function sessionOf(...data: string[]) {
  const { kv, holdNext } = versionedKv();
  const store = new CheckpointStore(kvBackend(kv));
  for (const value of data) await store.checkpoint('s', value);
  const holdAppend = async (value: string, options?: { expectedHead: number }) => {
    const held = holdNext((method, key) => method === 'setIfVersion' && key.startsWith('ckpt:s:'));
    const append = store.checkpoint('s', value, options);
    return { append, release: await held };
  };
  return { store, holdAppend };
}

describe('kvBackend append on a store that compares versions', () => {
  it('makes three calls per checkpoint: read the record, create the body, swap the record', async () => {
    const { kv, counted } = versionedKv();
    const store = new CheckpointStore(kvBackend(kv));
    await store.checkpoint('s', { step: 1 });
    expect(counted()).toEqual(['getWithVersion', 'set', 'setIfVersion']);
    for (let step = 2; step <= 5; step++) {
      await store.checkpoint('s', { step });
      expect(counted()).toEqual(['getWithVersion', 'setIfVersion', 'setIfVersion']);
    }
    expect(await store.history('s')).toEqual([1, 2, 3, 4, 5]);
  });

  it('reads a checkpoint in two calls, a session in one, and rolls back in three', async () => {
    const { kv, counted } = versionedKv();
    const store = new CheckpointStore(kvBackend(kv));
    for (let step = 1; step <= 3; step++) await store.checkpoint('s', { step });
    counted();
    await store.load('s', 2);
    expect(counted()).toEqual(['getWithVersion', 'get']);
    await store.info('s');
    expect(counted()).toEqual(['getWithVersion']);
    await store.rollback('s', 1);
    expect(counted()).toEqual(['getWithVersion', 'get', 'setIfVersion']);
  });

  it('makes one call more for an idempotency key, and one more after a keyed checkpoint', async () => {
    const { kv, counted } = versionedKv();
    const store = new CheckpointStore(kvBackend(kv));
    await store.checkpoint('s', 1);
    counted();
    await store.checkpoint('s', 2, { idempotencyKey: 'a' });
    // The key is looked up; it is written under i: by the append after it.
    expect(counted()).toEqual(['getWithVersion', 'get', 'setIfVersion', 'setIfVersion']);
    await store.checkpoint('s', 3, { idempotencyKey: 'b' });
    expect(counted()).toEqual(['getWithVersion', 'get', 'setIfVersion', 'set', 'setIfVersion']);
    expect((await store.checkpoint('s', 'again', { idempotencyKey: 'a' })).data).toBe(2);
    expect((await store.checkpoint('s', 'again', { idempotencyKey: 'b' })).data).toBe(3);
    expect(await store.history('s')).toEqual([1, 2, 3]);
  });

  it("commits another caller's body that it finds at the next seq, and that caller answers with its seq", async () => {
    const { store, holdAppend } = await sessionOf('one');
    const a = await holdAppend('a');
    const b = await store.checkpoint('s', 'b');
    a.release();
    expect((await a.append).seq).toBe(2);
    expect(b.seq).toBe(3);
    expect((await store.load('s', 2))?.data).toBe('a');
    expect(await store.load('s', 3)).toMatchObject({ data: 'b', parent: 2 });
  });

  it('replaces a body written against a record changed since, and its writer writes again', async () => {
    const { store, holdAppend } = await sessionOf('one');
    const a = await holdAppend('a');
    // The record changes under A: its body can never be committed now.
    await store.pin('s', 1);
    const b = await store.checkpoint('s', 'b');
    a.release();
    expect(b.seq).toBe(2);
    expect(await a.append).toMatchObject({ seq: 3, parent: 2 });
    expect((await store.load('s', 2))?.data).toBe('b');
    expect((await store.load('s', 3))?.data).toBe('a');
    expect(await store.history('s')).toEqual([1, 2, 3]);
  });

  it('answers CONFLICT to a caller whose head moved, and never commits its body later', async () => {
    const { store, holdAppend } = await sessionOf('one', 'two');
    const a = await holdAppend('a', { expectedHead: 2 });
    await store.rollback('s', 1);
    a.release();
    await expect(a.append).rejects.toMatchObject({ code: 'CONFLICT' });
    // Back at the head A expected, with A's body still at the next seq: it is not committed.
    await store.rollback('s', 2);
    const next = await store.checkpoint('s', 'next');
    expect(next).toMatchObject({ seq: 3, data: 'next' });
    expect((await store.list('s')).items.map((cp) => cp.seq)).toEqual([3, 2, 1]);
  });
});

describe('kvBackend append cut short after any of its calls', () => {
  for (const after of [false, true]) {
    for (let n = 1; n <= 5; n++) {
      it(`at call ${n}, ${after ? 'after' : 'before'} it reached the store: the session reads whole, a retry with the key writes once, and the next append goes on`, async () => {
        const { kv } = versionedKv();
        const store = new CheckpointStore(kvBackend(kv));
        await store.checkpoint('s', 'one', { idempotencyKey: 'k1' });
        await store.checkpoint('s', 'two', { idempotencyKey: 'k2' });
        const cut = new CheckpointStore(kvBackend(failingAt(kv, n, after)));
        await cut.checkpoint('s', 'three', { idempotencyKey: 'k3' }).catch(() => {});
        const head = await store.head('s');
        expect((await store.load('s', head!))?.seq).toBe(head);
        expect((await store.checkpoint('s', 'three', { idempotencyKey: 'k3' })).seq).toBe(3);
        expect((await store.checkpoint('s', 'four')).seq).toBe(4);
        const seqs = await store.history('s');
        const data = await Promise.all(seqs.map(async (seq) => (await store.load('s', seq))?.data));
        expect(data).toEqual(['one', 'two', 'three', 'four']);
        expect((await store.loadByKey('s', 'k2'))?.data).toBe('two');
      });
    }
  }
});
