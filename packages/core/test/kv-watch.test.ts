/**
 * kvBackend's watch() on a KV store's log of its writes, beyond the contract suite: records of
 * older writes (no `change` field), writes that are no change (pins), a page read on past the
 * writes that are none, a log that let go of a cursor, and a `changes()` or `onChanges()` that
 * breaks the KV contract.
 */
import { firstEvents } from '@ckpt/contract-tests/servers';
import { describe, expect, it } from 'vitest';
import type { StoredChange } from '../src/adapter.js';
import {
  type CheckpointBackend,
  CheckpointStore,
  isCkptError,
  type KvStore,
  kvBackend,
} from '../src/index.js';
import { logEnd, loggedKv } from './support/logged-kv.js';

const brief = (e: { sessionId: string; kind: string; seq?: number }) =>
  e.seq === undefined ? [e.sessionId, e.kind] : [e.sessionId, e.kind, e.seq];

/** Every change of `backend`'s log after `after`, read `limit` at a time. */
async function changesAfter(backend: CheckpointBackend, after: string, limit: number) {
  const all: StoredChange[] = [];
  for (let from = after; ; ) {
    const page = await backend.changes!({ after: from, limit });
    if (page === 'expired') throw new Error('expired');
    expect(page.changes.length).toBeLessThanOrEqual(limit);
    all.push(...page.changes);
    if (page.changes.length < limit) return all;
    from = page.position;
  }
}

describe('kvBackend watch() on a log of writes', () => {
  it('reads and watches a session whose record an older write made, without a change field', async () => {
    const { kv, values } = loggedKv();
    const store = new CheckpointStore(kvBackend(kv));
    await store.checkpoint('s', { n: 1 });
    await store.checkpoint('s', { n: 2 });
    const stream = store.watch({ sessionId: 's' });
    await stream.ready;
    // What a kvBackend from before the field wrote: the same record, without it.
    const { change, ...older } = JSON.parse(values.get('ckpt:s:s')!);
    expect(change).toBe('checkpoint');
    await kv.set('ckpt:s:s', JSON.stringify(older));
    expect((await store.load('s'))?.data).toEqual({ n: 2 });
    await store.rollback('s', 1);
    await store.checkpoint('s', { n: 3 });
    expect((await firstEvents(stream, 3)).map(brief)).toEqual([
      ['s', 'checkpoint', 2],
      ['s', 'rollback', 1],
      ['s', 'checkpoint', 3],
    ]);
    expect(JSON.parse(values.get('ckpt:s:s')!).change).toBe('checkpoint');
  });

  it('gives no event for a pin or an unpin, and a delete for a sweep that left a tombstone', async () => {
    const { kv } = loggedKv();
    const backend = kvBackend(kv);
    const store = new CheckpointStore(backend);
    const stream = store.watch();
    await stream.ready;
    await store.checkpoint('s', 1);
    await store.pin('s', 1, { note: 'keep' });
    await store.unpin('s', 1);
    await store.checkpoint('s', 2);
    expect(await backend.deleteIdle('s', Date.now() + 1, false)).toEqual({
      status: 'deleted',
      checkpoints: 2,
    });
    expect((await firstEvents(stream, 3)).map(brief)).toEqual([
      ['s', 'checkpoint', 1],
      ['s', 'checkpoint', 2],
      ['s', 'delete'],
    ]);
  });

  it('fills a page by reading on past writes that are no change, and misses none between pages', async () => {
    const { kv } = loggedKv();
    const backend = kvBackend(kv);
    const store = new CheckpointStore(backend);
    const start = await logEnd(backend);
    // Each checkpoint writes a body before its record, and a key's entry before that.
    for (let n = 1; n <= 4; n++) await store.checkpoint('s', n, { idempotencyKey: `k${n}` });
    await store.state('scope').set('x', 1);
    const expected = [
      ['s', 'checkpoint', 1],
      ['s', 'checkpoint', 2],
      ['s', 'checkpoint', 3],
      ['s', 'checkpoint', 4],
      ['scope', 'state', null],
    ];
    for (const limit of [1, 2, 3, 500]) {
      const changes = await changesAfter(backend, start, limit);
      expect(changes.map((c) => [c.sessionId, c.kind, c.seq])).toEqual(expected);
    }
  });

  it('fails a watcher whose cursor the log let go of with EXPIRED', async () => {
    const { kv } = loggedKv({ kept: 5 });
    const store = new CheckpointStore(kvBackend(kv));
    const stream = store.watch();
    await stream.ready;
    await store.checkpoint('s', 1);
    const [first] = await firstEvents(stream, 1);
    for (let n = 2; n <= 5; n++) await store.checkpoint('s', n);
    let failed: unknown;
    try {
      const late = store.watch({ since: first!.cursor });
      await late.ready;
    } catch (err) {
      failed = err;
    }
    expect(isCkptError(failed, 'EXPIRED')).toBe(true);
  });

  it('wakes watchers through onChanges, not at a poll', async () => {
    const { kv } = loggedKv();
    // A poll far beyond the case's time: only a wake can bring the event in time.
    const store = new CheckpointStore(kvBackend({ ...kv, changesPollMs: 3_600_000 }));
    const stream = store.watch();
    await stream.ready;
    const started = Date.now();
    await store.checkpoint('s', 1);
    expect((await firstEvents(stream, 1)).map(brief)).toEqual([['s', 'checkpoint', 1]]);
    expect(Date.now() - started).toBeLessThan(1_000);
  });
});

describe('kvBackend refuses a log of writes that breaks the KV contract', () => {
  const base = (): KvStore => {
    const { get, set, delete: remove } = loggedKv().kv;
    return { get, set, delete: remove };
  };

  function refusal(kv: unknown): string {
    try {
      kvBackend(kv as KvStore);
    } catch (err) {
      expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
      return (err as Error).message;
    }
    throw new Error('kvBackend took the store');
  }

  it('at the call: a changes() or onChanges() that is no function, or onChanges() alone', () => {
    expect(refusal({ ...base(), changes: 'yes' })).toMatch(
      /changes\(\) \(with onChanges\(\).*lacks changes\(\)/,
    );
    expect(refusal({ ...base(), changes: async () => null, onChanges: 5 })).toMatch(
      /lacks onChanges\(\)/,
    );
    expect(refusal({ ...base(), onChanges: async () => async () => {} })).toBe(
      'kvBackend(kv) takes onChanges() only with changes(): a wake tells watchers to read the log of writes that changes() answers; got onChanges() alone.',
    );
  });

  it('at the call: a changesPollMs that is no positive number, or that comes without changes()', () => {
    const changes = async () => ({ changes: [], position: '0' });
    for (const changesPollMs of [0, -5, Number.NaN, Infinity, '25']) {
      expect(refusal({ ...base(), changes, changesPollMs })).toMatch(
        /kv\.changesPollMs must be a positive number of milliseconds/,
      );
    }
    expect(refusal({ ...base(), changesPollMs: 25 })).toMatch(/got number 25 without changes\(\)/);
  });

  /** What reading `answer` from a store's changes() fails with. */
  async function readFailure(answer: unknown, after: string | null = '1', limit = 2) {
    const backend = kvBackend({ ...base(), changes: async () => answer as never });
    return backend.changes!({ after, limit }).then(
      () => 'read',
      (err: Error) => err.message,
    );
  }

  it('at a read: an answer out of order, not after the position asked for, too long or of the wrong shape', async () => {
    const write = (key: string, position: string, value: unknown = 'v') => ({
      key,
      value,
      position,
    });
    expect(await readFailure({ changes: [write('a', '3'), write('b', '2')], position: '3' })).toBe(
      'kv.changes() must answer writes in the order of its log, each after the position asked for, positions sorting as strings; it answered "2" after "3"',
    );
    expect(await readFailure({ changes: [write('a', '1')], position: '1' })).toMatch(
      /it answered "1" after "1"/,
    );
    expect(
      await readFailure({
        changes: [write('a', '2'), write('b', '3'), write('c', '4')],
        position: '4',
      }),
    ).toBe('kv.changes() answered 3 writes when asked for at most 2');
    expect(await readFailure({ changes: [write('a', '2')], position: '2' }, null, 0)).toBe(
      'kv.changes() answered 1 writes when asked for at most 0 (none after null: only the position of its end)',
    );
    expect(await readFailure({ changes: [write('a', '2', 5)], position: '2' })).toMatch(
      /must answer writes as \{ key, value, position \} \(value a string, or null for a delete\)/,
    );
    expect(await readFailure({ changes: [write('a', '2')], position: '1' })).toMatch(
      /a page's position at or after its last write's/,
    );
    expect(await readFailure([])).toBe(
      "kv.changes() must answer { changes, position }, 'expired' or 'unknown'; it answered an array",
    );
    expect(await readFailure('expired', null)).toBe(
      `kv.changes() must answer the log's end to a read with after null; it answered "expired"`,
    );
  });

  it("at a read: a position the store answers 'unknown' to is refused as not this store's cursor", async () => {
    const failure = await kvBackend({ ...base(), changes: async () => 'unknown' }).changes!({
      after: '7',
      limit: 1,
    }).catch((err: unknown) => err);
    expect(isCkptError(failure, 'INVALID_ARGUMENT')).toBe(true);
    expect((failure as Error).message).toMatch(
      /since "7" is not a cursor of this store's change log/,
    );
  });
});
