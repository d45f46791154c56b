/**
 * kvBackend's watch() by polling, on a KV store without a log of its writes (`watchByPolling`):
 * what a poll tells (a session's changes since the last poll as one event, a state scope's
 * likewise, deletes), cursors that only the process that made them can use, and what the
 * option refuses. The polls are made by calling the backend's change log, so that each case
 * says exactly which writes fall between two polls.
 */
import { firstEvents } from '@ckpt/contract-tests/servers';
import { memoryKv } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import {
  type CheckpointBackend,
  CheckpointStore,
  isCkptError,
  type KvStore,
  kvBackend,
} from '../src/index.js';
import { logEnd } from './support/logged-kv.js';

/** A poll: the changes since `after`, and the position to poll from next. */
async function poll(backend: CheckpointBackend, after: string) {
  const page = await backend.changes!({ after, limit: 500 });
  if (page === 'expired') throw new Error('expired');
  return {
    changes: page.changes.map((c) => [c.sessionId, c.kind, c.seq]),
    position: page.position,
  };
}

describe('kvBackend watchByPolling', () => {
  it('tells, at each poll, each session and state scope that changed since the last', async () => {
    const kv = memoryKv();
    const backend = kvBackend(kv, { watchByPolling: true });
    const store = new CheckpointStore(backend);
    await store.checkpoint('old', 1);
    await store.state('sc').set('k', 1);
    let at = await logEnd(backend);
    // The first poll only noted what there was; a poll with nothing written tells nothing.
    expect((await poll(backend, at)).changes).toEqual([]);

    await store.checkpoint('a', 1);
    await store.checkpoint('a', 2);
    await store.pin('old', 1);
    await store.state('sc').set('k', 2);
    let polled = await poll(backend, at);
    expect(polled.changes).toEqual([
      ['a', 'checkpoint', 2],
      ['sc', 'state', null],
    ]);
    at = polled.position;

    await store.rollback('a', 1);
    await store.fork('a', { atSeq: 1, newId: 'b' });
    await store.unpin('old', 1);
    await store.delete('old');
    await store.state('sc').delete('k');
    polled = await poll(backend, at);
    expect(polled.changes).toEqual([
      ['a', 'rollback', 1],
      ['b', 'fork', 1],
      ['old', 'delete', null],
      ['sc', 'state', null],
    ]);
    at = polled.position;

    await store.checkpoint('a', 3);
    await store.checkpoint('a', 4);
    polled = await poll(backend, at);
    at = polled.position;
    await store.prune('a', { keepLast: 1 });
    expect(polled.changes).toEqual([['a', 'checkpoint', 4]]);
    expect((await poll(backend, at)).changes).toEqual([['a', 'prune', 4]]);
  });

  it('gives the changes through watch(), and goes on from a cursor in the same process', async () => {
    const kv = memoryKv();
    const store = new CheckpointStore(kvBackend(kv, { watchByPolling: { everyMs: 10 } }));
    const writer = new CheckpointStore(kvBackend(kv));
    const stream = store.watch({ sessionId: 's' });
    await stream.ready;
    await writer.checkpoint('s', 1);
    const [seen] = await firstEvents(stream, 1);
    expect([seen!.kind, seen!.seq]).toEqual(['checkpoint', 1]);
    await writer.checkpoint('s', 2);
    const resumed = store.watch({ sessionId: 's', since: seen!.cursor });
    expect((await firstEvents(resumed, 1)).map((e) => [e.kind, e.seq])).toEqual([
      ['checkpoint', 2],
    ]);
  });

  it("fails a cursor of another process's poll with EXPIRED, and refuses one no poll made", async () => {
    const kv = memoryKv();
    const elsewhere = kvBackend(kv, { watchByPolling: true });
    const cursor = await logEnd(elsewhere);
    const backend = kvBackend(kv, { watchByPolling: true });
    const store = new CheckpointStore(backend);
    const failure = async (since: string) => {
      try {
        await store.watch({ since }).ready;
      } catch (err) {
        return err;
      }
      return undefined;
    };
    expect(isCkptError(await failure(cursor), 'EXPIRED')).toBe(true);
    const own = await logEnd(backend);
    for (const since of ['nonsense', '12', own.replace(/\d/g, '9')]) {
      expect(isCkptError(await failure(since), 'INVALID_ARGUMENT')).toBe(true);
    }
  });

  it('is off unless asked for: watch() on a KV store without changes() is UNSUPPORTED', () => {
    const store = new CheckpointStore(kvBackend(memoryKv()));
    expect(store.capabilities.watch).toBe(false);
    expect(() => store.watch()).toThrow(expect.objectContaining({ code: 'UNSUPPORTED' }));
  });

  it('refuses what cannot poll, and a store that has a log of its own', () => {
    const { get, set, delete: remove } = memoryKv();
    const refusal = (kv: KvStore, watchByPolling: unknown) => {
      try {
        kvBackend(kv, { watchByPolling } as never);
      } catch (err) {
        expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
        return (err as Error).message;
      }
      throw new Error('kvBackend took the option');
    };
    expect(refusal({ get, set, delete: remove }, true)).toMatch(
      /watchByPolling needs a KV store with list\(\)/,
    );
    const logged = {
      ...memoryKv(),
      changes: async () => ({ changes: [], position: '0' }),
    };
    expect(refusal(logged, true)).toMatch(/this one keeps a log of its writes/);
    for (const bad of [{ everyMs: 0 }, { everyMs: '5' }, null, 5]) {
      expect(refusal(memoryKv(), bad)).toMatch(/watchByPolling/);
    }
    expect(refusal(memoryKv(), { everyMS: 5 })).toBe(
      'kvBackend() watchByPolling has no option "everyMS"; its only option is everyMs.',
    );
  });
});
