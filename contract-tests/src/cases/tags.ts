/**
 * Tags: set with a checkpoint or on their own, kept with the session (fork copies them, export,
 * import and copy carry them, delete removes them), and `sessions({ where })` through the
 * backend's index, in the catalog's order, page after page while sessions change.
 */
import {
  type BackendCapabilities,
  type CheckpointStore,
  compareCodePoints,
  copyStore,
  MAX_TAGS,
  type SessionInfo,
} from '@ckpt/core';
import { describe, expect } from 'vitest';
import { itIf, itWith } from '../gate.js';
import type { ContractContext } from '../harness.js';
import {
  allPages,
  allSettledOrThrow,
  checkpointToImport,
  expectCkptError,
  sessionToImport,
} from '../util.js';

/** The ids `where` lists, page after page of `limit`. */
async function matching(
  store: CheckpointStore,
  where: Record<string, string>,
  limit = 50,
  prefix?: string,
): Promise<string[]> {
  const found = await allPages(
    (page) => store.sessions({ ...page, where, ...(prefix === undefined ? {} : { prefix }) }),
    limit,
  );
  return found.map((s) => s.sessionId);
}

/** What the whole catalog says `where` should list: every session read, then filtered. */
async function expected(
  store: CheckpointStore,
  where: Record<string, string>,
  prefix = '',
): Promise<string[]> {
  const all = await allPages((page) => store.sessions(page), 100);
  return all
    .filter(
      (s) =>
        s.sessionId.startsWith(prefix) &&
        Object.entries(where).every(([key, value]) => s.tags[key] === value),
    )
    .map((s) => s.sessionId);
}

function newestFirst(a: SessionInfo, b: SessionInfo): number {
  const byTime = b.updatedAt.getTime() - a.updatedAt.getTime();
  return byTime !== 0 ? byTime : compareCodePoints(b.sessionId, a.sessionId);
}

/** A deterministic sequence of numbers in [0, 1), so that a failing run is the same run again. */
function sequence(seed: number): () => number {
  let x = seed;
  return () => {
    x = (x * 1_103_515_245 + 12_345) % 2 ** 31;
    return x / 2 ** 31;
  };
}

/** Tags, and the filtered catalog. */
export function tagCases(t: ContractContext, caps: BackendCapabilities, namespaced: boolean): void {
  const withTags = itIf(caps.tags && caps.listSessions, 'the backend does not declare tags');
  const withNamespaces = itIf(
    caps.tags && caps.listSessions && namespaced,
    'the backend does not declare tags, or the harness has no namespaced()',
  );
  const withTagsAlone = itWith(caps, 'tags');
  const withoutTags = itIf(!caps.tags, 'the backend declares tags');
  const withConcurrency = itIf(
    caps.tags && caps.listSessions && caps.concurrentWriters,
    'the backend does not declare tags, listSessions and concurrentWriters',
  );

  describe('tags', () => {
    withTagsAlone('sets them with a checkpoint, keeps them, and replaces them whole', async () => {
      await t.store.checkpoint('s', 1, { tags: { user: 'ann', status: 'open' } });
      const first = await t.store.info('s');
      expect(first?.tags).toEqual({ status: 'open', user: 'ann' });
      // Keys in ascending order, whatever order they were given in.
      expect(Object.keys(first!.tags)).toEqual(['status', 'user']);
      await t.store.checkpoint('s', 2);
      expect((await t.store.info('s'))?.tags).toEqual({ status: 'open', user: 'ann' });
      await t.store.checkpoint('s', 3, { tags: { status: 'done' } });
      expect((await t.store.info('s'))?.tags).toEqual({ status: 'done' });
      await t.store.checkpoint('s', 4, { tags: {} });
      expect((await t.store.info('s'))?.tags).toEqual({});
    });

    withTagsAlone('a session never tagged has none', async () => {
      await t.store.checkpoint('plain', 1);
      expect((await t.store.info('plain'))?.tags).toEqual({});
    });

    withTagsAlone(
      'setTags changes them alone: not the head, checkpoints or updatedAt',
      async () => {
        await t.store.checkpoint('s', 1, { tags: { user: 'ann' } });
        await t.store.checkpoint('s', 2);
        const before = await t.store.info('s');
        await t.store.setTags('s', { user: 'bob', agent: 'triage' });
        const after = await t.store.info('s');
        expect(after).toEqual({ ...before, tags: { agent: 'triage', user: 'bob' } });
        await t.store.setTags('s', {});
        expect((await t.store.info('s'))?.tags).toEqual({});
      },
    );

    withTagsAlone('setTags on a missing session is NOT_FOUND and creates nothing', async () => {
      await expectCkptError(t.store.setTags('nobody', { user: 'ann' }), 'NOT_FOUND');
      expect(await t.store.info('nobody')).toBeNull();
      if (caps.listSessions) expect(await matching(t.store, { user: 'ann' })).toEqual([]);
    });

    withTagsAlone('a replayed or refused checkpoint does not change them', async () => {
      await t.store.checkpoint('s', 1, { tags: { status: 'open' }, idempotencyKey: 'k' });
      await t.store.checkpoint('s', 1, { tags: { status: 'replayed' }, idempotencyKey: 'k' });
      expect((await t.store.info('s'))?.tags).toEqual({ status: 'open' });
      await expectCkptError(
        t.store.checkpoint('s', 2, { tags: { status: 'conflict' }, expectedHead: 7 }),
        'CONFLICT',
      );
      expect((await t.store.info('s'))?.tags).toEqual({ status: 'open' });
      await expectCkptError(
        t.store.checkpoint('new', 1, { tags: { status: 'conflict' }, expectedHead: 3 }),
        'CONFLICT',
      );
      expect(await t.store.info('new')).toBeNull();
    });

    withTagsAlone('update() sets them with the checkpoint it writes', async () => {
      await t.store.update('s', () => 1, { tags: { user: 'ann' } });
      expect((await t.store.info('s'))?.tags).toEqual({ user: 'ann' });
    });

    withTagsAlone('a rollback and a prune keep them; a delete removes them', async () => {
      for (let i = 1; i <= 4; i++) await t.store.checkpoint('s', i, { tags: { user: 'ann' } });
      await t.store.rollback('s', 2);
      await t.store.prune('s', { keepLast: 1 });
      expect((await t.store.info('s'))?.tags).toEqual({ user: 'ann' });
      if (caps.listSessions) expect(await matching(t.store, { user: 'ann' })).toEqual(['s']);
      expect(await t.store.delete('s')).toBe(true);
      if (caps.listSessions) expect(await matching(t.store, { user: 'ann' })).toEqual([]);
      // A session made again under the id starts without them.
      await t.store.checkpoint('s', 1);
      expect((await t.store.info('s'))?.tags).toEqual({});
      if (caps.listSessions) expect(await matching(t.store, { user: 'ann' })).toEqual([]);
    });

    withTagsAlone('a fork copies them; each then has its own', async () => {
      await t.store.checkpoint('a', 1, { tags: { user: 'ann', agent: 'x' } });
      await t.store.checkpoint('a', 2);
      await t.store.fork('a', { atSeq: 1, newId: 'b' });
      expect((await t.store.info('b'))?.tags).toEqual({ agent: 'x', user: 'ann' });
      await t.store.setTags('b', { user: 'bob' });
      expect((await t.store.info('a'))?.tags).toEqual({ agent: 'x', user: 'ann' });
      if (caps.listSessions) {
        expect(await matching(t.store, { user: 'ann' })).toEqual(['a']);
        expect(await matching(t.store, { user: 'bob' })).toEqual(['b']);
      }
    });

    withTagsAlone('export and import carry them; an import without tags has none', async () => {
      await t.store.checkpoint('a', 1, { tags: { user: 'ann', 'k.v:w-x_y': 'ü/ %:=' } });
      const exported = await t.store.exportSession('a');
      expect(exported?.tags).toEqual({ 'k.v:w-x_y': 'ü/ %:=', user: 'ann' });
      const checkpoints = [];
      for await (const cp of exported!.checkpoints) checkpoints.push(cp);
      await t.store.importSession({ ...exported!, sessionId: 'b', checkpoints });
      expect((await t.store.info('b'))?.tags).toEqual(exported?.tags);
      // Replacing a session replaces its tags, in the index too.
      await t.store.importSession(
        { ...exported!, sessionId: 'b', checkpoints, tags: { user: 'cy' } },
        { ifExists: 'replace' },
      );
      expect((await t.store.info('b'))?.tags).toEqual({ user: 'cy' });
      await t.store.importSession(sessionToImport('c', [checkpointToImport(1)]));
      expect((await t.store.info('c'))?.tags).toEqual({});
      if (caps.listSessions) {
        expect(await matching(t.store, { user: 'ann' })).toEqual(['a']);
        expect(await matching(t.store, { user: 'cy' })).toEqual(['b']);
        expect(await matching(t.store, { 'k.v:w-x_y': 'ü/ %:=' })).toEqual(['a']);
      }
    });

    withNamespaces('copyStore carries them', async () => {
      await t.store.checkpoint('a', 1, { tags: { user: 'ann' } });
      await t.store.checkpoint('b', 1, { tags: { user: 'bob' } });
      await t.store.setTags('a', { user: 'ann', copied: 'no' });
      const target = await t.namespaced('tagscopy');
      await copyStore(t.store, target);
      expect((await target.info('a'))?.tags).toEqual({ copied: 'no', user: 'ann' });
      expect(await matching(target, { user: 'bob' })).toEqual(['b']);
    });

    withTags('where lists the sessions that have every pair, in the catalog order', async () => {
      await t.store.checkpoint('a', 1, { tags: { user: 'ann', status: 'open' } });
      await t.store.checkpoint('b', 1, { tags: { user: 'ann', status: 'done' } });
      await t.store.checkpoint('c', 1, { tags: { user: 'bob', status: 'open' } });
      await t.store.checkpoint('d', 1, { tags: { user: 'ann' } });
      await t.store.checkpoint('e', 1);
      await t.store.checkpoint('a', 2);
      expect(await matching(t.store, { user: 'ann' })).toEqual(
        await expected(t.store, { user: 'ann' }),
      );
      expect((await matching(t.store, { user: 'ann' })).sort()).toEqual(['a', 'b', 'd']);
      expect(await matching(t.store, { user: 'ann', status: 'open' })).toEqual(['a']);
      // The order of the pairs (which one the backend walks) does not change what is listed.
      expect(await matching(t.store, { status: 'open', user: 'ann' })).toEqual(['a']);
      expect(await matching(t.store, { status: 'open', user: 'ann' }, 1)).toEqual(
        await matching(t.store, { user: 'ann', status: 'open' }, 1),
      );
      expect(await matching(t.store, { status: 'open' })).toEqual(
        await expected(t.store, { status: 'open' }),
      );
      expect(await matching(t.store, { user: 'cy' })).toEqual([]);
      expect(await matching(t.store, { user: 'ann', status: 'nope' })).toEqual([]);
      // `where: {}` filters nothing.
      expect(await matching(t.store, {})).toEqual(await expected(t.store, {}));
      // Listed whole, as info() gives each.
      const [first] = (await t.store.sessions({ where: { user: 'ann', status: 'open' } })).items;
      expect(first).toEqual(await t.store.info('a'));
    });

    withTags('a key and a value never run into each other, nor a value into another', async () => {
      await t.store.checkpoint('a', 1, { tags: { a: 'b:c' } });
      await t.store.checkpoint('b', 1, { tags: { 'a:b': 'c' } });
      await t.store.checkpoint('c', 1, { tags: { a: 'b' } });
      await t.store.checkpoint('d', 1, { tags: { a: 'b:c/d' } });
      await t.store.checkpoint('e', 1, { tags: { a: '' } });
      await t.store.checkpoint('f', 1, { tags: { a: 'B' } });
      expect(await matching(t.store, { a: 'b:c' })).toEqual(['a']);
      expect(await matching(t.store, { 'a:b': 'c' })).toEqual(['b']);
      expect(await matching(t.store, { a: 'b' })).toEqual(['c']);
      expect(await matching(t.store, { a: '' })).toEqual(['e']);
      expect(await matching(t.store, { a: 'B' })).toEqual(['f']);
      const values = [
        '😀',
        'ann smith',
        '"quoted"',
        "it's",
        '%2F',
        'a'.repeat(256),
        'é'.repeat(128),
      ];
      for (const [i, value] of values.entries()) {
        await t.store.checkpoint(`v${i}`, 1, { tags: { name: value } });
      }
      for (const [i, value] of values.entries()) {
        expect(await matching(t.store, { name: value })).toEqual([`v${i}`]);
        expect((await t.store.info(`v${i}`))?.tags).toEqual({ name: value });
      }
    });

    withTags('where with a prefix lists the sessions that match both', async () => {
      for (const id of ['u1/a', 'u1/b', 'u2/a', 'u10/a']) {
        await t.store.checkpoint(id, 1, { tags: { kind: 'chat' } });
      }
      await t.store.checkpoint('u1/c', 1, { tags: { kind: 'run' } });
      expect((await matching(t.store, { kind: 'chat' }, 1, 'u1/')).sort()).toEqual([
        'u1/a',
        'u1/b',
      ]);
      expect(await matching(t.store, { kind: 'chat' }, 2, 'u1')).toEqual(
        await expected(t.store, { kind: 'chat' }, 'u1'),
      );
    });

    withTags('pages in any size list each match once, in order', async () => {
      for (let i = 0; i < 30; i++) {
        await t.store.checkpoint(`s${String(i).padStart(2, '0')}`, i, {
          tags: { team: i % 3 === 0 ? 'red' : 'blue', n: String(i % 2) },
        });
      }
      const want = await expected(t.store, { team: 'red' });
      expect(want).toHaveLength(10);
      for (const limit of [1, 3, 7, 1000]) {
        expect(await matching(t.store, { team: 'red' }, limit)).toEqual(want);
      }
      expect(await matching(t.store, { team: 'red', n: '0' }, 2)).toEqual(
        await expected(t.store, { team: 'red', n: '0' }),
      );
    });

    withTags(
      'follows updatedAt: a checkpoint or rollback moves a session to the front',
      async () => {
        await t.store.checkpoint('a', 1, { tags: { user: 'ann' } });
        await t.store.checkpoint('b', 1, { tags: { user: 'ann' } });
        await t.store.checkpoint('c', 1, { tags: { user: 'ann' } });
        await t.store.checkpoint('a', 2);
        const afterCheckpoint = await matching(t.store, { user: 'ann' });
        expect(afterCheckpoint).toEqual(await expected(t.store, { user: 'ann' }));
        await t.store.rollback('b', 1);
        const afterRollback = await matching(t.store, { user: 'ann' });
        expect(afterRollback).toEqual(await expected(t.store, { user: 'ann' }));
        const listed = (await t.store.sessions({ where: { user: 'ann' } })).items;
        expect([...listed].sort(newestFirst)).toEqual(listed);
      },
    );

    withTags('pages go on while sessions are tagged and untagged between them', async () => {
      // Imported with times of their own, so that a session written now comes before them all.
      for (let i = 0; i < 12; i++) {
        await t.store.importSession({
          ...sessionToImport(`s${String(i).padStart(2, '0')}`, [checkpointToImport(1)]),
          updatedAt: new Date(10_000 + i * 1_000),
          tags: { q: 'x' },
        });
      }
      const before = await expected(t.store, { q: 'x' });
      const first = await t.store.sessions({ where: { q: 'x' }, limit: 4 });
      expect(first.items.map((s) => s.sessionId)).toEqual(before.slice(0, 4));
      // Untag one not yet listed, tag a new one (it lands before the cursor: updatedAt now),
      // and retag one already listed.
      const untagged = before[6]!;
      await t.store.setTags(untagged, { q: 'y' });
      await t.store.checkpoint('late', 1, { tags: { q: 'x' } });
      await t.store.setTags(before[1]!, { q: 'x', more: '1' });
      const rest = await allPages(
        (page) =>
          t.store.sessions({ ...page, where: { q: 'x' }, cursor: page.cursor ?? first.cursor }),
        3,
      );
      const ids = rest.map((s) => s.sessionId);
      expect(ids).toEqual(before.slice(4).filter((id) => id !== untagged));
      // Retagging a session already listed leaves its place in the catalog as it was.
      expect(await matching(t.store, { q: 'x' })).toEqual(await expected(t.store, { q: 'x' }));
      // Tagging a session already passed does not list it again; a new listing finds it.
      await t.store.setTags(before[0]!, { q: 'z' });
      expect(await matching(t.store, { q: 'z' })).toEqual([before[0]]);
    });

    withTags('takes `after` as the cursor', async () => {
      for (const id of ['a', 'b', 'c']) await t.store.checkpoint(id, 1, { tags: { k: 'v' } });
      const first = await t.store.sessions({ where: { k: 'v' }, limit: 2 });
      const next = await t.store.sessions({ where: { k: 'v' }, limit: 2, after: first.cursor });
      expect([...first.items, ...next.items].map((s) => s.sessionId)).toEqual(
        await expected(t.store, { k: 'v' }),
      );
      expect(next.cursor).toBeNull();
    });

    withTags('refuses a cursor of another listing with INVALID_ARGUMENT', async () => {
      for (const id of ['a', 'b', 'c']) {
        await t.store.checkpoint(id, 1, { tags: { k: 'v', j: 'w' } });
      }
      const ofV = (await t.store.sessions({ where: { k: 'v' }, limit: 1 })).cursor;
      const ofAll = (await t.store.sessions({ limit: 1 })).cursor;
      await expectCkptError(
        t.store.sessions({ where: { k: 'w' }, cursor: ofV }),
        'INVALID_ARGUMENT',
      );
      await expectCkptError(t.store.sessions({ cursor: ofV }), 'INVALID_ARGUMENT');
      await expectCkptError(
        t.store.sessions({ where: { k: 'v' }, cursor: ofAll }),
        'INVALID_ARGUMENT',
      );
      await expectCkptError(
        t.store.sessions({ where: { k: 'v' }, cursor: ofV, after: ofAll }),
        'INVALID_ARGUMENT',
      );
      expect((await t.store.sessions({ where: { k: 'v' }, cursor: ofV })).items).toHaveLength(2);
      // The same pairs in another order are the same listing.
      const ofBoth = (await t.store.sessions({ where: { k: 'v', j: 'w' }, limit: 1 })).cursor;
      const rest = await t.store.sessions({ where: { j: 'w', k: 'v' }, cursor: ofBoth });
      expect(rest.items).toHaveLength(2);
    });

    withTags('the index matches every session read, after random writes', async () => {
      const next = sequence(58);
      const pick = <T>(items: readonly T[]) => items[Math.floor(next() * items.length)]!;
      const ids = Array.from({ length: 16 }, (_, i) => `r${i}`);
      const users = ['ann', 'bob', 'cy'];
      const statuses = ['open', 'done'];
      const randomTags = () =>
        next() < 0.2
          ? {}
          : { user: pick(users), ...(next() < 0.7 ? { status: pick(statuses) } : {}) };
      for (let step = 0; step < 120; step++) {
        const id = pick(ids);
        const exists = (await t.store.info(id)) !== null;
        const roll = next();
        if (!exists || roll < 0.35) {
          await t.store.checkpoint(id, step, next() < 0.7 ? { tags: randomTags() } : {});
        } else if (roll < 0.5) {
          await t.store.setTags(id, randomTags());
        } else if (roll < 0.6) {
          const oldest = (await t.store.list(id, { limit: 1000 })).items.at(-1)!;
          await t.store.rollback(id, oldest.seq);
        } else if (roll < 0.68) {
          await t.store.delete(id);
        } else if (roll < 0.78) {
          const target = pick(ids);
          if ((await t.store.info(target)) === null) await t.store.fork(id, { newId: target });
        } else if (roll < 0.86) {
          await t.store.prune(id, { keepLast: 1 });
        } else {
          const exported = await t.store.exportSession(id);
          const checkpoints = [];
          for await (const cp of exported!.checkpoints) checkpoints.push(cp);
          const target = pick(ids);
          await t.store.importSession(
            { ...exported!, sessionId: target, checkpoints, tags: randomTags() },
            { ifExists: 'replace' },
          );
        }
      }
      for (const user of users) {
        expect(await matching(t.store, { user }, 3)).toEqual(await expected(t.store, { user }));
        for (const status of statuses) {
          const where = { user, status };
          expect(await matching(t.store, where, 2)).toEqual(await expected(t.store, where));
        }
      }
      expect(await matching(t.store, { status: 'done' }, 4, 'r1')).toEqual(
        await expected(t.store, { status: 'done' }, 'r1'),
      );
    });

    withConcurrency('sessions tagged at once from several connections are all found', async () => {
      const stores = [t.store, await t.connect(), await t.connect()];
      await allSettledOrThrow(
        Array.from({ length: 30 }, (_, i) =>
          stores[i % stores.length]!.checkpoint(`c${i}`, i, {
            tags: { group: i % 2 === 0 ? 'even' : 'odd' },
          }),
        ),
      );
      await allSettledOrThrow(
        Array.from({ length: 10 }, (_, i) =>
          stores[i % stores.length]!.setTags(`c${i * 2}`, { group: 'moved' }),
        ),
      );
      expect((await matching(t.store, { group: 'even' }, 4)).length).toBe(5);
      expect((await matching(t.store, { group: 'moved' }, 4)).length).toBe(10);
      expect(await matching(t.store, { group: 'odd' }, 4)).toEqual(
        await expected(t.store, { group: 'odd' }),
      );
    });

    describe('limits', () => {
      const tooMany = Object.fromEntries(
        Array.from({ length: MAX_TAGS + 1 }, (_, i) => [`k${i}`, 'v']),
      );
      const bad: [string, unknown][] = [
        ['too many tags', tooMany],
        ['an empty key', { '': 'v' }],
        ['a key with a space', { 'a b': 'v' }],
        ['a key with a slash', { 'a/b': 'v' }],
        ['a key of 65 characters', { ['k'.repeat(65)]: 'v' }],
        ['a value of 257 bytes', { k: `${'é'.repeat(128)}x` }],
        ['a number', { k: 1 }],
        ['null', { k: null }],
        ['a NUL', { k: 'a\0b' }],
        ['a lone surrogate', { k: '\ud800' }],
        ['an array', ['a']],
        ['a string', 'user=ann'],
        ['null tags', null],
      ];

      withTagsAlone('the largest tags are taken', async () => {
        const most = Object.fromEntries(
          Array.from({ length: MAX_TAGS }, (_, i) => [
            `${'k'.repeat(62)}${String(i).padStart(2, '0')}`,
            '€'.repeat(85),
          ]),
        );
        await t.store.checkpoint('s', 1, { tags: most });
        expect((await t.store.info('s'))?.tags).toEqual(most);
        if (caps.listSessions) {
          expect(await matching(t.store, { [Object.keys(most)[3]!]: '€'.repeat(85) })).toEqual([
            's',
          ]);
        }
      });

      for (const [what, tags] of bad) {
        withTagsAlone(`refuses ${what} with INVALID_ARGUMENT, writing nothing`, async () => {
          await expectCkptError(
            t.store.checkpoint('new', 1, { tags: tags as Record<string, string> }),
            'INVALID_ARGUMENT',
          );
          expect(await t.store.info('new')).toBeNull();
          await t.store.checkpoint('s', 1, { tags: { user: 'ann' } });
          await expectCkptError(
            t.store.checkpoint('s', 2, { tags: tags as Record<string, string> }),
            'INVALID_ARGUMENT',
          );
          await expectCkptError(
            t.store.setTags('s', tags as Record<string, string>),
            'INVALID_ARGUMENT',
          );
          const info = await t.store.info('s');
          expect(info?.head).toBe(1);
          expect(info?.tags).toEqual({ user: 'ann' });
          await expectCkptError(
            t.store.importSession({
              ...sessionToImport('imported', [checkpointToImport(1)]),
              tags: tags as Record<string, string>,
            }),
            'INVALID_ARGUMENT',
          );
          expect(await t.store.info('imported')).toBeNull();
          if (caps.listSessions) {
            await expectCkptError(
              t.store.sessions({ where: tags as Record<string, string> }),
              'INVALID_ARGUMENT',
            );
          }
        });
      }
    });

    withoutTags('without tags, refuses them with UNSUPPORTED, writing nothing', async () => {
      await expectCkptError(t.store.checkpoint('s', 1, { tags: { user: 'ann' } }), 'UNSUPPORTED');
      expect(await t.store.info('s')).toBeNull();
      await t.store.checkpoint('s', 1);
      expect((await t.store.info('s'))?.tags).toEqual({});
      await expectCkptError(t.store.setTags('s', { user: 'ann' }), 'UNSUPPORTED');
      await expectCkptError(
        t.store.importSession({
          ...sessionToImport('imported', [checkpointToImport(1)]),
          tags: { user: 'ann' },
        }),
        'UNSUPPORTED',
      );
      expect(await t.store.info('imported')).toBeNull();
      if (caps.listSessions) {
        await expectCkptError(t.store.sessions({ where: { user: 'ann' } }), 'UNSUPPORTED');
      }
    });
  });
}
