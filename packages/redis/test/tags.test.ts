/**
 * Tags on Redis, beyond the contract suite: the tag index holds exactly one entry for each tag
 * of each session, at its updatedAt, after every kind of write (a leftover entry of a session
 * deleted would not show in a listing, which describes the sessions it finds); the script that
 * reads it walks the rarest tag and reads no more than it is allowed; and a namespace of
 * layout version 2 opens with its sessions untagged.
 */
import { CheckpointStore, type SessionInfo } from '@ckpt/core';
import type { RedisBackend } from '@ckpt/redis';
import { describe, expect, it } from 'vitest';
import { LAYOUT_VERSION } from '../src/migrate.js';
import { hex, markerKey, SHARDS, sessionKeys, shardOf, tagIndexKey } from '../src/schema.js';
import { padTime } from '../src/script-values.js';
import { taggedPage } from '../src/statements.js';
import { tagStart } from '../src/tags.js';
import { admin, backendsOn, servers } from './support.js';

/** Every session of the store, read from the catalog. */
async function everySession(store: CheckpointStore): Promise<SessionInfo[]> {
  const all: SessionInfo[] = [];
  for (let cursor: string | null = null; ; ) {
    const page = await store.sessions({ limit: 100, cursor });
    all.push(...page.items);
    if (page.cursor === null) return all;
    cursor = page.cursor;
  }
}

/** What each shard's tag index should hold for `sessions`: an entry a tag, at its updatedAt. */
function expectedEntries(sessions: SessionInfo[]): string[][] {
  const shards: string[][] = Array.from({ length: SHARDS }, () => []);
  for (const s of sessions) {
    for (const [key, value] of Object.entries(s.tags)) {
      shards[shardOf(s.sessionId)]!.push(
        `${tagStart(key, value)}${padTime(s.updatedAt.getTime())}:${hex(s.sessionId)}`,
      );
    }
  }
  return shards.map((entries) => entries.sort());
}

/** What each shard's tag index holds. */
async function heldEntries(backend: RedisBackend): Promise<string[][]> {
  return Promise.all(
    Array.from({ length: SHARDS }, async (_, shard) =>
      (await backend.client.zrange(tagIndexKey(backend.namespace, shard), '0', '-1')).sort(),
    ),
  );
}

async function expectIndexInStep(backend: RedisBackend, store: CheckpointStore): Promise<void> {
  expect(await heldEntries(backend)).toEqual(expectedEntries(await everySession(store)));
}

/** A deterministic sequence of numbers in [0, 1). */
function sequence(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

describe.each(servers)('redis tags on $name', ({ cluster, up }) => {
  const open = backendsOn(cluster);

  it.skipIf(!up)(
    'keeps one index entry for each tag of each session, at its updatedAt, through every kind of write',
    async () => {
      const backend = open();
      const store = new CheckpointStore(backend);
      const next = sequence(7);
      const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
      const ids = Array.from({ length: 12 }, (_, i) => `id ${i}/é`);
      // Values the scripts' JSON decoder must give back byte for byte, so that an entry a write
      // adds is the one a later write removes, and the one a listing looks for.
      const values = ['ann', '', 'a=b', 'x\ty\u0001', 'back\\slash "q"', '😀 \u2028', 'b:c'];
      const randomTags = () =>
        next() < 0.2
          ? {}
          : Object.fromEntries(
              ['user', 'a:b', 'k.v'].filter(() => next() < 0.6).map((k) => [k, pick(values)]),
            );
      for (let step = 0; step < 150; step++) {
        const id = pick(ids);
        const exists = (await store.info(id)) !== null;
        const roll = next();
        if (!exists || roll < 0.3) {
          await store.checkpoint(id, step, next() < 0.6 ? { tags: randomTags() } : {});
        } else if (roll < 0.42) {
          await store.setTags(id, randomTags());
        } else if (roll < 0.5) {
          await store.rollback(id, 1).catch(() => {});
        } else if (roll < 0.56) {
          await store.delete(id);
        } else if (roll < 0.62) {
          await backend.deleteIdle(id, Date.now() + 1000, false);
        } else if (roll < 0.66) {
          await backend.deleteIdleBatch({ idleBefore: Date.now() + 1000, limit: 2 });
        } else if (roll < 0.76) {
          const target = pick(ids);
          if ((await store.info(target)) === null) await store.fork(id, { newId: target });
        } else if (roll < 0.84) {
          await store.prune(id, { keepLast: 1 });
        } else {
          const exported = await store.exportSession(id);
          const checkpoints = [];
          for await (const cp of exported!.checkpoints) checkpoints.push(cp);
          await store.importSession(
            {
              ...exported!,
              sessionId: pick(ids),
              checkpoints,
              updatedAt: new Date(Date.now() - Math.floor(next() * 100_000)),
              tags: randomTags(),
            },
            { ifExists: 'replace' },
          );
        }
        if (step % 25 === 24) await expectIndexInStep(backend, store);
      }
      await expectIndexInStep(backend, store);
      for (const value of values) {
        const want = (await everySession(store)).filter((s) => s.tags.user === value);
        const listed = await store.sessions({ where: { user: value }, limit: 100 });
        expect(listed.items).toEqual(want);
      }
      // Once every session is gone, so is every entry (and every emptied index key).
      for (const id of ids) await store.delete(id);
      expect((await heldEntries(backend)).flat()).toEqual([]);
    },
  );

  it.skipIf(!up)(
    'keeps tags in the session hash as JSON text, and no field at all for none',
    async () => {
      const backend = open();
      const store = new CheckpointStore(backend);
      const session = sessionKeys(backend.namespace, 's').session;
      await store.checkpoint('s', 1, { tags: { user: 'ann', a: 'é' } });
      expect(await backend.client.hget(session, 'tags')).toBe('{"a":"é","user":"ann"}');
      await store.setTags('s', {});
      expect(await backend.client.hexists(session, 'tags')).toBe(0);
    },
  );

  it.skipIf(!up)(
    'opens a namespace of layout version 2: its sessions untagged, then tagged and found',
    async () => {
      const before = open();
      const old = new CheckpointStore(before);
      await old.checkpoint('a', 1);
      await old.checkpoint('b', 1);
      // What version 2 wrote: sessions without a tags field, and no tag index.
      expect(await before.client.hexists(sessionKeys(before.namespace, 'a').session, 'tags')).toBe(
        0,
      );
      expect((await heldEntries(before)).flat()).toEqual([]);
      await admin(cluster).set(markerKey(before.namespace), '2');

      const after = open(before.namespace);
      const store = new CheckpointStore(after);
      await after.ready();
      expect(await admin(cluster).get(markerKey(after.namespace))).toBe(LAYOUT_VERSION);
      expect((await store.info('a'))?.tags).toEqual({});
      expect((await store.sessions()).items.map((s) => s.tags)).toEqual([{}, {}]);
      expect((await store.sessions({ where: { user: 'ann' } })).items).toEqual([]);
      await store.setTags('a', { user: 'ann' });
      await store.checkpoint('b', 2, { tags: { user: 'ann' } });
      expect(
        (await store.sessions({ where: { user: 'ann' } })).items.map((s) => s.sessionId),
      ).toEqual(['b', 'a']);
      await expectIndexInStep(after, store);
    },
  );
});

describe.each(servers)('the tag index read on $name', ({ cluster, up }) => {
  const open = backendsOn(cluster);

  /** A shard's index holding `chat` for 600 sessions, and `ann` for three of them. */
  async function indexOfShard(): Promise<{
    backend: RedisBackend;
    key: string;
    tails: string[];
  }> {
    const backend = open();
    const key = tagIndexKey(backend.namespace, 0);
    // Newest first: the tail of session n is older as n grows.
    const tails = Array.from(
      { length: 600 },
      (_, n) => `${padTime(1_000_000 - n)}:${hex(`s${n}`)}`,
    );
    const entries = tails.flatMap((tail) => [0, `${tagStart('kind', 'chat')}${tail}`]);
    for (const n of [5, 300, 599]) entries.push(0, `${tagStart('user', 'ann')}${tails[n]}`);
    await backend.client.zadd(key, ...entries);
    return { backend, key, tails };
  }

  const read = (backend: RedisBackend, key: string, args: (string | number)[]) =>
    taggedPage.run<string[]>(backend.client, [key], args);

  it.skipIf(!up)('lists one tag newest first, reading only the page', async () => {
    const { backend, key, tails } = await indexOfShard();
    const chat = tagStart('kind', 'chat');
    // Where it stopped is the last tail it lists: it read no further.
    expect(await read(backend, key, ['', 50, 10, '', chat])).toEqual([
      tails[49],
      ...tails.slice(0, 50),
    ]);
    expect(await read(backend, key, [tails[49]!, 3, 10, '', chat])).toEqual([
      tails[52],
      ...tails.slice(50, 53),
    ]);
    expect(await read(backend, key, [tails[598]!, 3, 10, '', chat])).toEqual(['', tails[599]]);
  });

  it.skipIf(!up)(
    'walks the tag with the fewest entries, whichever order the tags come in',
    async () => {
      const { backend, key, tails } = await indexOfShard();
      const want = ['', tails[5], tails[300], tails[599]];
      // A budget of 10 entries read: walking `chat` would stop after 10 with nothing found.
      const [chat, ann] = [tagStart('kind', 'chat'), tagStart('user', 'ann')];
      expect(await read(backend, key, ['', 10, 10, '', chat, ann])).toEqual(want);
      expect(await read(backend, key, ['', 10, 10, '', ann, chat])).toEqual(want);
      // A tag without entries in the shard ends the walk before it starts.
      expect(await read(backend, key, ['', 10, 10, '', chat, tagStart('user', 'bob')])).toEqual([
        '',
      ]);
    },
  );

  it.skipIf(!up)('reads no more entries than its budget, and says where to go on', async () => {
    const { backend, key, tails } = await indexOfShard();
    const chat = tagStart('kind', 'chat');
    // No id starts with `x`: every entry is read and passed over.
    expect(await read(backend, key, ['', 5, 100, hex('x'), chat])).toEqual([tails[99]]);
    expect(await read(backend, key, [tails[99]!, 5, 1000, hex('x'), chat])).toEqual(['']);
    // An id prefix keeps the ids that start with it.
    expect(await read(backend, key, ['', 5, 1000, hex('s59'), chat])).toEqual([
      tails[593],
      tails[59],
      ...tails.slice(590, 594),
    ]);
  });
});
