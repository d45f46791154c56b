/** `watch()`: every change from another connection, in order, filtered, resumed, and ended. */
import {
  type BackendCapabilities,
  type ChangeEvent,
  type ChangeStream,
  type CheckpointStore,
  isCkptError,
} from '@ckpt/core';
import { describe, expect, it } from 'vitest';
import { itWith } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { expectCkptError } from '../util.js';

/** Long enough for any backend's poll on a busy machine; a case that waits this long has failed. */
const WAIT_MS = 15_000;

/**
 * The first `count` events of `stream`; fails, with what did come, when they do not arrive in
 * time. Closes the iteration either way.
 */
export async function firstEvents(stream: ChangeStream, count: number): Promise<ChangeEvent[]> {
  const events: ChangeEvent[] = [];
  const iterator = stream[Symbol.asyncIterator]();
  const timer = setTimeout(() => void iterator.return?.(), WAIT_MS);
  try {
    while (events.length < count) {
      const next = await iterator.next();
      if (next.done) break;
      events.push(next.value);
    }
  } finally {
    clearTimeout(timer);
    await iterator.return?.();
  }
  if (events.length < count) {
    throw new Error(
      `expected ${count} events within ${WAIT_MS} ms, got ${events.length}: ${JSON.stringify(events.map(brief))}`,
    );
  }
  return events;
}

/**
 * That a watcher from `cursor`, which `store`'s log let go of, is refused with EXPIRED saying
 * to reload, and that the store's other watchers go on.
 */
export async function expectCursorExpired(store: CheckpointStore, cursor: string): Promise<void> {
  const refusal = await store.watch({ since: cursor }).ready.then(
    () => null,
    (err: unknown) => err,
  );
  expect(isCkptError(refusal, 'EXPIRED')).toBe(true);
  expect(String((refusal as Error).message)).toMatch(/reload/);
  const now = store.watch({ sessionId: 'after expiry' });
  await now.ready;
  await store.checkpoint('after expiry', 1);
  expect((await firstEvents(now, 1)).map((e) => e.seq)).toEqual([1]);
}

/** An event without its cursor, which each backend makes its own way. */
function brief(event: ChangeEvent) {
  return event.seq === undefined
    ? [event.sessionId, event.kind]
    : [event.sessionId, event.kind, event.seq];
}

export function watchCases(t: ContractContext, caps: BackendCapabilities): void {
  const withWatch = itWith(caps, 'watch');

  describe('watch', () => {
    it('is there exactly where the backend has a change log', () => {
      expect(t.store.capabilities.watch).toBe(caps.watch);
      if (!caps.watch) {
        let refused: unknown;
        try {
          t.store.watch();
        } catch (err) {
          refused = err;
        }
        expect(isCkptError(refused, 'UNSUPPORTED')).toBe(true);
      }
    });

    withWatch('gives every kind of change another connection makes, in order', async () => {
      const writer = await t.connect();
      const stream = t.store.watch();
      await stream.ready;
      await writer.checkpoint('w/a', { n: 1 });
      await writer.checkpoint('w/a', { n: 2 });
      await writer.checkpoint('w/a', { n: 3 });
      await writer.rollback('w/a', 2);
      const fork = await writer.fork('w/a', { atSeq: 3, newId: 'w/b' });
      await writer.prune('w/a', { keepLast: 1 });
      await writer.state('w/a').set('k', 1);
      await writer.state('w/a').delete('k');
      await writer.delete(fork);
      const events = await firstEvents(stream, 9);
      expect(events.map(brief)).toEqual([
        ['w/a', 'checkpoint', 1],
        ['w/a', 'checkpoint', 2],
        ['w/a', 'checkpoint', 3],
        ['w/a', 'rollback', 2],
        ['w/b', 'fork', 3],
        ['w/a', 'prune', 2],
        ['w/a', 'state'],
        ['w/a', 'state'],
        ['w/b', 'delete'],
      ]);
      const cursors = events.map((e) => e.cursor);
      expect([...cursors].sort()).toEqual(cursors);
      expect(new Set(cursors).size).toBe(cursors.length);
    });

    withWatch('gives only the session or the prefix asked for', async () => {
      const writer = await t.connect();
      const one = t.store.watch({ sessionId: 'p/1' });
      const prefixed = t.store.watch({ prefix: 'p/' });
      await Promise.all([one.ready, prefixed.ready]);
      await writer.checkpoint('q/1', 1);
      await writer.checkpoint('p/2', 1);
      await writer.checkpoint('p/1', 1);
      await writer.checkpoint('p/10', 1);
      await writer.checkpoint('p/1', 2);
      expect((await firstEvents(one, 2)).map(brief)).toEqual([
        ['p/1', 'checkpoint', 1],
        ['p/1', 'checkpoint', 2],
      ]);
      expect((await firstEvents(prefixed, 4)).map((e) => e.sessionId)).toEqual([
        'p/2',
        'p/1',
        'p/10',
        'p/1',
      ]);
    });

    withWatch('goes on from a cursor: what changed meanwhile comes first', async () => {
      const writer = await t.connect();
      const first = t.store.watch({ sessionId: 'r' });
      await first.ready;
      await writer.checkpoint('r', 1);
      const [seen] = await firstEvents(first, 1);
      for (let n = 2; n <= 5; n++) await writer.checkpoint('r', n);
      await writer.delete('r');
      const resumed = t.store.watch({ sessionId: 'r', since: seen!.cursor });
      expect((await firstEvents(resumed, 5)).map(brief)).toEqual([
        ['r', 'checkpoint', 2],
        ['r', 'checkpoint', 3],
        ['r', 'checkpoint', 4],
        ['r', 'checkpoint', 5],
        ['r', 'delete'],
      ]);
    });

    withWatch(
      'learns every checkpoint of many writers at once, each session in order',
      async () => {
        const writers = await Promise.all([t.connect(), t.connect(), t.connect()]);
        const stream = t.store.watch({ prefix: 'many/' });
        await stream.ready;
        const sessions = 12;
        const each = 5;
        await Promise.all(
          Array.from({ length: sessions }, async (_, i) => {
            const writer = writers[i % writers.length]!;
            for (let n = 1; n <= each; n++) await writer.checkpoint(`many/${i}`, n);
          }),
        );
        const events = await firstEvents(stream, sessions * each);
        const bySession = new Map<string, number[]>();
        for (const event of events) {
          bySession.set(event.sessionId, [...(bySession.get(event.sessionId) ?? []), event.seq!]);
        }
        expect(bySession.size).toBe(sessions);
        for (const seqs of bySession.values()) expect(seqs).toEqual([1, 2, 3, 4, 5]);
      },
    );

    withWatch(
      'ends when its signal aborts, when the loop stops, and when the store closes',
      async () => {
        const controller = new AbortController();
        const aborted = t.store.watch({ signal: controller.signal });
        await aborted.ready;
        const ending = (async () => {
          for await (const _ of aborted) {
            // Nothing is written: the loop only ends.
          }
        })();
        controller.abort();
        await ending;

        const stopped = t.store.watch();
        await stopped.ready;
        await t.store.checkpoint('d', 1);
        for await (const event of stopped) {
          expect(event.sessionId).toBe('d');
          break;
        }

        // Last: closing the store closes the backend the case's other stores share.
        const store = t.store;
        const open = store.watch();
        await open.ready;
        const closing = (async () => {
          const seen: ChangeEvent[] = [];
          for await (const event of open) seen.push(event);
          return seen;
        })();
        await store.checkpoint('c', 1);
        await store.close();
        const seen = await closing;
        expect(seen.every((e) => e.sessionId === 'c')).toBe(true);
        expect(() => store.watch()).toThrow(/closed/);
      },
    );

    withWatch('refuses what is not a cursor of its log, and options it does not have', async () => {
      // Past the log's end, in each backend's form: a cursor of another store, never made here.
      const stream = t.store.watch();
      await stream.ready;
      await t.store.checkpoint('c', 1);
      const [made] = await firstEvents(stream, 1);
      const beyond = made!.cursor.replace(/\d/g, '9');
      for (const since of ['', 'nonsense', '12', 42 as unknown as string, beyond]) {
        const refusal = (async () => {
          const stream = t.store.watch({ since });
          await stream.ready;
          for await (const _ of stream) break;
        })();
        await expectCkptError(refusal, 'INVALID_ARGUMENT');
      }
      let refused: unknown;
      try {
        t.store.watch({ session: 'x' } as never);
      } catch (err) {
        refused = err;
      }
      expect(isCkptError(refused, 'INVALID_ARGUMENT')).toBe(true);
      expect(String((refused as Error).message)).toContain('watch()');
    });
  });
}
