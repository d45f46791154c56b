/**
 * The Redis change log (change-log.ts, change-wakes.ts) on a real single server and cluster:
 * order across clients, wakes that survive a cut subscription, the connections it holds, the
 * trim, cursors it did not make, and the horizon that no late entry goes under.
 */
import { firstEvents } from '@ckpt/contract-tests/servers';
import { type ChangeEvent, CheckpointStore, isCkptError } from '@ckpt/core';
import { logPosition, readLogPosition } from '@ckpt/core/adapter';
import type { RedisBackend } from '@ckpt/redis';
import { describe, expect, it } from 'vitest';
import { subscriberName } from '../src/change-wakes.js';
import { changesKeys, hex, KEPT_CHANGES, SHARDS, shardOf } from '../src/schema.js';
import { admin, backendsOn, keysOf, masters, servers } from './support.js';

/** The ids of `backend`'s subscribed connections on every master (of the cluster, if `cluster`). */
async function subscribers(
  backend: RedisBackend,
  cluster: boolean,
): Promise<{ node: number; id: string }[]> {
  const found: { node: number; id: string }[] = [];
  const nodes = await masters(admin(cluster));
  for (const [node, master] of nodes.entries()) {
    const list = String(await master.client('LIST'));
    for (const line of list.split('\n')) {
      if (line.includes(` name=${subscriberName(backend.namespace)} `)) {
        found.push({ node, id: /\bid=(\d+)/.exec(line)![1]! });
      }
    }
  }
  return found;
}

/** Resolves once `check` holds, or fails saying what it saw last, after `ms`. */
async function eventually<T>(read: () => Promise<T>, check: (value: T) => boolean, ms = 5_000) {
  const until = Date.now() + ms;
  let last = await read();
  while (!check(last) && Date.now() < until) {
    await new Promise((resolve) => setTimeout(resolve, 25));
    last = await read();
  }
  return last;
}

/** The next event of `iterator`; fails when none comes within 10 seconds (a poll is a minute). */
async function nextEvent(iterator: AsyncIterator<ChangeEvent>): Promise<ChangeEvent> {
  let timer: ReturnType<typeof setTimeout> | undefined;
  const late = new Promise<never>((_, reject) => {
    timer = setTimeout(() => reject(new Error('no event came within 10 seconds')), 10_000);
  });
  try {
    const next = await Promise.race([iterator.next(), late]);
    if (next.done) throw new Error('the watch ended');
    return next.value;
  } finally {
    clearTimeout(timer);
  }
}

/** An event without its cursor. */
const brief = (e: ChangeEvent) => [e.sessionId, e.kind, e.seq];

/** Watchers of `backend` read only when woken: its guard poll waits a minute (see onChanges). */
function wakesOnly(backend: RedisBackend): RedisBackend {
  Object.defineProperty(backend, 'changesPollMs', { value: 60_000 });
  return backend;
}

/** A session id, other than those of `taken`, in another shard than each of them. */
function idInAnotherShard(...taken: string[]): string {
  for (let i = 0; ; i++) {
    const id = `other-${i}`;
    if (taken.every((t) => shardOf(t) !== shardOf(id))) return id;
  }
}

describe.each(servers)('the redis change log on $name', ({ cluster, up }) => {
  const open = backendsOn(cluster);
  const admin_ = () => admin(cluster);

  it.skipIf(!up)('gives the changes of another client in the order it made them', async () => {
    const watched = open();
    const writer = new CheckpointStore(open(watched.namespace));
    const store = new CheckpointStore(watched);
    const stream = store.watch();
    await stream.ready;
    const written: [string, string, number | undefined][] = [];
    for (let n = 1; n <= 4; n++) {
      for (const id of ['a', 'b', 'c', 'd', 'e']) {
        await writer.checkpoint(id, n);
        written.push([id, 'checkpoint', n]);
      }
    }
    await writer.state('e').set('k', 1);
    written.push(['e', 'state', undefined]);
    const events = await firstEvents(stream, written.length);
    expect(events.map(brief)).toEqual(written);
  });

  it.skipIf(!up)(
    'subscribes again after its connection is cut, and misses nothing written meanwhile',
    async () => {
      const watched = wakesOnly(open());
      const writer = new CheckpointStore(open(watched.namespace));
      const store = new CheckpointStore(watched);
      const stream = store.watch();
      await stream.ready;
      const before = await subscribers(watched, cluster);
      expect(before.length).toBeGreaterThan(0);
      const nodes = await masters(admin_());
      for (const { node, id } of before) await nodes[node]!.client('KILL', 'ID', id);
      // Written while the subscriptions are down: no message reaches the watcher, only the wake
      // after they are made again (its poll is a minute away).
      await writer.checkpoint('cut', 1);
      const iterator = stream[Symbol.asyncIterator]();
      expect(brief(await nextEvent(iterator))).toEqual(['cut', 'checkpoint', 1]);
      const again = await eventually(
        () => subscribers(watched, cluster),
        (now) => now.length === before.length,
      );
      expect(again.length).toBe(before.length);
      expect(again.map((s) => s.id)).not.toContain(before[0]!.id);
      // And the new subscriptions wake it.
      await writer.checkpoint('cut', 2);
      expect(brief(await nextEvent(iterator))).toEqual(['cut', 'checkpoint', 2]);
      await iterator.return?.();
    },
  );

  it.skipIf(!up)(
    'holds its subscriptions once per store, and lets them go when the watchers end and at close',
    async () => {
      const backend = open();
      const store = new CheckpointStore(backend);
      expect(await subscribers(backend, cluster)).toEqual([]);
      const controller = new AbortController();
      const streams = [1, 2, 3].map(() => store.watch({ signal: controller.signal }));
      await Promise.all(streams.map((s) => s.ready));
      // One per master that holds shards: all three on the cluster, one on a single server.
      const held = await subscribers(backend, cluster);
      expect(held.length).toBe(cluster ? 3 : 1);
      controller.abort();
      expect(
        await eventually(
          () => subscribers(backend, cluster),
          (now) => now.length === 0,
        ),
      ).toEqual([]);

      const again = store.watch();
      await again.ready;
      expect((await subscribers(backend, cluster)).length).toBe(held.length);
      await store.close();
      expect(
        await eventually(
          () => subscribers(backend, cluster),
          (now) => now.length === 0,
        ),
      ).toEqual([]);
    },
  );

  it.skipIf(!up)(
    'tells a watcher behind what a shard let go that it must reload (EXPIRED)',
    async () => {
      const backend = open();
      const store = new CheckpointStore(backend);
      const stream = store.watch({ sessionId: 'busy' });
      await stream.ready;
      await store.state('busy').set('k', 0);
      const [first] = await firstEvents(stream, 1);
      // Enough changes in the scope's one shard that its stream lets go of the first.
      const scope = store.state('busy');
      for (let n = 1; n <= KEPT_CHANGES + 500; n += 500) {
        await Promise.all(Array.from({ length: 500 }, (_, i) => scope.set(`k${(n + i) % 7}`, n)));
      }
      const { stream: key } = changesKeys(backend.namespace, shardOf('busy'));
      const length = Number(await admin_().xlen(key));
      expect(length).toBeGreaterThanOrEqual(KEPT_CHANGES);
      expect(length).toBeLessThan(KEPT_CHANGES + 501);
      const late = store.watch({ since: first!.cursor });
      const refusal = await late.ready.then(
        () => null,
        (err: unknown) => err,
      );
      expect(isCkptError(refusal, 'EXPIRED')).toBe(true);
      expect(await backend.changes({ after: first!.cursor, limit: 10 })).toBe('expired');
      // A cursor the stream still holds goes on.
      const end = await backend.changes({ after: null, limit: 0 });
      if (end === 'expired') throw new Error('the end of the log cannot expire');
      expect(await backend.changes({ after: end.position, limit: 10 })).toEqual({
        changes: [],
        position: end.position,
      });
    },
  );

  it.skipIf(!up)('refuses a cursor beyond its end, or of no entry it can make', async () => {
    const backend = open();
    const store = new CheckpointStore(backend);
    const stream = store.watch();
    await stream.ready;
    await store.checkpoint('x', 1);
    const [event] = await firstEvents(stream, 1);
    const [time, n, shard] = readLogPosition(event!.cursor, 3);
    const refused = [
      // A thousand seconds past the log's end.
      logPosition(time! + 1_000_000_000n, n!, shard!),
      // A shard the log does not have.
      logPosition(time!, n!, SHARDS),
      // An entry number no stream id holds.
      logPosition(time!, 2n ** 64n, shard!),
    ];
    for (const since of refused) {
      let error: unknown;
      try {
        await backend.changes({ after: since, limit: 10 });
      } catch (err) {
        error = err;
      }
      expect(isCkptError(error, 'INVALID_ARGUMENT'), since).toBe(true);
      const watching = store.watch({ since });
      expect(
        isCkptError(
          await watching.ready.then(
            () => null,
            (err: unknown) => err,
          ),
          'INVALID_ARGUMENT',
        ),
      ).toBe(true);
    }
    // The cursor itself is good.
    expect(await backend.changes({ after: event!.cursor, limit: 10 })).toEqual({
      changes: [],
      position: expect.any(String),
    });
  });

  it.skipIf(!up)(
    'never hands out a position that a later change lands under (an entry ahead of the clock)',
    async () => {
      const backend = wakesOnly(open());
      const writer = new CheckpointStore(open(backend.namespace));
      const store = new CheckpointStore(backend);
      const stream = store.watch();
      await stream.ready;
      // An entry a minute ahead of every clock, in one shard: what a node whose clock runs
      // ahead writes, or a script that took its time long before it logged. A reader hands out
      // its position; a change made after, in another shard, by a node whose clock is behind
      // it, must still come after it in the log, not under it where the reader would skip it.
      const ahead = 'ahead';
      const now = BigInt(Date.now()) * 1000n;
      await admin_().xadd(
        changesKeys(backend.namespace, shardOf(ahead)).stream,
        `${now + 60_000_000n}-0`,
        's',
        hex(ahead),
        'k',
        'checkpoint',
        'q',
        '1',
      );
      // Its wake: the entry was written by hand, without one.
      await writer.checkpoint(ahead, 1);
      const iterator = stream[Symbol.asyncIterator]();
      const seen = [await nextEvent(iterator)];
      expect(brief(seen[0]!)).toEqual([ahead, 'checkpoint', 1]);
      const behind = idInAnotherShard(ahead);
      await writer.checkpoint(behind, 1);
      seen.push(await nextEvent(iterator));
      seen.push(await nextEvent(iterator));
      await iterator.return?.();
      // The entry written by hand, the checkpoint after it in its own shard, then the other.
      expect(seen.map(brief)).toEqual([
        [ahead, 'checkpoint', 1],
        [ahead, 'checkpoint', 1],
        [behind, 'checkpoint', 1],
      ]);
      expect(seen[2]!.cursor > seen[0]!.cursor).toBe(true);
    },
  );

  it.skipIf(!up)(
    'reads a namespace written before it had a change log as an empty log, writing nothing',
    async () => {
      const backend = open();
      const store = new CheckpointStore(backend);
      await store.checkpoint('old', 1);
      await store.state('old').set('k', 1);
      for (let shard = 0; shard < SHARDS; shard++) {
        const { stream, floor } = changesKeys(backend.namespace, shard);
        await admin_().del(stream);
        await admin_().del(floor);
      }
      const keys = (await keysOf(admin_(), backend.namespace)).sort();
      const watching = store.watch();
      await watching.ready;
      expect(await backend.changes({ after: null, limit: 0 })).toEqual({
        changes: [],
        position: logPosition(0, 10n ** 20n - 1n, 0),
      });
      expect((await keysOf(admin_(), backend.namespace)).sort()).toEqual(keys);
      await store.checkpoint('old', 2);
      expect((await firstEvents(watching, 1)).map(brief)).toEqual([['old', 'checkpoint', 2]]);
    },
  );

  it.skipIf(!up)('is removed whole by destroy(), its floors included', async () => {
    const backend = open();
    const store = new CheckpointStore(backend);
    const watching = store.watch();
    await watching.ready;
    await store.checkpoint('d', 1);
    await firstEvents(watching, 1);
    const keys = await keysOf(admin_(), backend.namespace);
    expect(keys.some((k) => k.endsWith(':changes'))).toBe(true);
    expect(keys.some((k) => k.endsWith(':changes:floor'))).toBe(true);
    await store.destroy();
    expect(await keysOf(admin_(), backend.namespace)).toEqual([]);
  });
});
