/** list, transcript and sessions, and the paging rules they share. */
import { type BackendCapabilities, compareCodePoints, type SessionInfo } from '@ckpt/core';
import { describe, expect, it, vi } from 'vitest';
import { itIf, itWith } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { allPages, allSettledOrThrow, expectCkptError, ODD_IDS, sleep } from '../util.js';

function isCatalogOrder(list: SessionInfo[]): boolean {
  return list.every((s, i) => {
    const prev = list[i - 1];
    if (!prev) return true;
    const a = prev.updatedAt.getTime();
    const b = s.updatedAt.getTime();
    return a > b || (a === b && compareCodePoints(prev.sessionId, s.sessionId) > 0);
  });
}

/** Listings and their pages. */
export function listingCases(t: ContractContext, caps: BackendCapabilities): void {
  const withList = itWith(caps, 'listSessions');
  const withoutList = itIf(!caps.listSessions, 'the backend declares listSessions');

  describe('list', () => {
    it('lists every stored checkpoint on every branch, seq descending, without data', async () => {
      for (let i = 1; i <= 3; i++) await t.store.checkpoint('s', i, { metadata: { i } });
      await t.store.rollback('s', 1);
      await t.store.checkpoint('s', 4, { metadata: { i: 4 } });
      const page = await t.store.list('s');
      expect(page.cursor).toBeNull();
      expect(page.items.map((c) => [c.seq, c.parent])).toEqual([
        [4, 1],
        [3, 2],
        [2, 1],
        [1, null],
      ]);
      expect(page.items[0]).toEqual({
        sessionId: 's',
        seq: 4,
        parent: 1,
        metadata: { i: 4 },
        createdAt: expect.any(Date),
        pinned: false,
        pinNote: null,
      });
      expect(page.items[0]).not.toHaveProperty('data');
    });

    it.each([1, 3, 7, 1000])(
      'walks every checkpoint exactly once in pages of %i',
      async (limit) => {
        for (let i = 1; i <= 20; i++) await t.store.checkpoint('s', i);
        const seqs = (await allPages((p) => t.store.list('s', p), limit)).map((c) => c.seq);
        expect(seqs).toEqual(Array.from({ length: 20 }, (_, i) => 20 - i));
      },
    );

    it('returns an empty page for an unknown session', async () => {
      expect(await t.store.list('nobody')).toEqual({ items: [], cursor: null });
    });

    it('starts below beforeSeq, and pages on from there', async () => {
      for (let i = 1; i <= 8; i++) await t.store.checkpoint('s', i);
      await t.store.prune('s', { keepLast: 6 });
      const first = await t.store.list('s', { beforeSeq: 7, limit: 2 });
      expect(first.items.map((c) => c.seq)).toEqual([6, 5]);
      const rest = await t.store.list('s', { beforeSeq: 7, cursor: first.cursor });
      expect(rest.items.map((c) => c.seq)).toEqual([4, 3]);
      expect(rest.cursor).toBeNull();
      expect((await t.store.list('s', { beforeSeq: 3 })).items).toEqual([]);
      expect((await t.store.list('s', { beforeSeq: 100 })).items).toHaveLength(6);
    });

    it('returns 50 items by default', async () => {
      for (let i = 1; i <= 51; i++) await t.store.checkpoint('s', i);
      const page = await t.store.list('s');
      expect(page.items).toHaveLength(50);
      expect(page.cursor).not.toBeNull();
      const rest = await t.store.list('s', { cursor: page.cursor });
      expect(rest.items.map((c) => c.seq)).toEqual([1]);
      expect(rest.cursor).toBeNull();
    });
  });

  describe('transcript', () => {
    it('returns the items of the active timeline, newest first, with seq, index and createdAt', async () => {
      const a = await t.store.checkpoint('s', 1, {
        transcript: ['hello', { role: 'ai', text: 'hi' }],
      });
      await t.store.checkpoint('s', 2);
      const c = await t.store.checkpoint('s', 3, { transcript: [['nested']] });
      const page = await t.store.transcript('s');
      expect(page).toEqual({
        items: [
          { seq: 3, index: 0, item: ['nested'], createdAt: c.createdAt },
          { seq: 1, index: 1, item: { role: 'ai', text: 'hi' }, createdAt: a.createdAt },
          { seq: 1, index: 0, item: 'hello', createdAt: a.createdAt },
        ],
        cursor: null,
      });
    });

    it('rewinds with a rollback and follows the new branch', async () => {
      await t.store.checkpoint('s', 1, { transcript: ['one'] });
      await t.store.checkpoint('s', 2, { transcript: ['two'] });
      await t.store.rollback('s', 1);
      expect((await t.store.transcript('s')).items.map((e) => e.item)).toEqual(['one']);
      await t.store.checkpoint('s', 3, { transcript: ['three'] });
      expect((await t.store.transcript('s')).items.map((e) => e.item)).toEqual(['three', 'one']);
    });

    it.each([1, 2, 5, 1000])('walks every item exactly once in pages of %i', async (limit) => {
      for (let i = 1; i <= 12; i++) {
        const items = Array.from({ length: i % 4 }, (_, j) => `c${i}i${j}`);
        await t.store.checkpoint('s', i, { transcript: items });
      }
      const want = [];
      for (let i = 12; i >= 1; i--) {
        for (let j = (i % 4) - 1; j >= 0; j--) want.push(`c${i}i${j}`);
      }
      const got = (await allPages((p) => t.store.transcript('s', p), limit)).map((e) => e.item);
      expect(got).toEqual(want);
    });

    it('returns an empty page for an unknown session', async () => {
      expect(await t.store.transcript('nobody')).toEqual({ items: [], cursor: null });
    });
  });

  describe('sessions', () => {
    withList('lists sessions by updatedAt descending, then sessionId descending', async () => {
      for (const id of ['b', 'a', 'c']) {
        await t.store.checkpoint(id, id);
        await sleep(3);
      }
      // Same millisecond or not, ties must fall back to the id.
      await allSettledOrThrow(['x', 'y', 'z'].map((id) => t.store.checkpoint(id, id)));
      const list = (await t.store.sessions({ limit: 1000 })).items;
      expect(list.map((s) => s.sessionId).sort()).toEqual(['a', 'b', 'c', 'x', 'y', 'z']);
      expect(isCatalogOrder(list)).toBe(true);
      expect(list.slice(3).map((s) => s.sessionId)).toEqual(['c', 'a', 'b']);
    });

    withList(
      'breaks a tie of updatedAt by sessionId descending, by code point, on every page',
      async () => {
        // One frozen clock gives every session the same updatedAt. By code point, U+1F99C comes
        // after U+FFFF; by UTF-16 code unit (JavaScript's own string order) it comes before.
        const ids = ['a', 'B', '\u00e9', '\uffff', '\u{1F99C}', 'a ', 'ab'];
        vi.useFakeTimers({ toFake: ['Date'] });
        try {
          vi.setSystemTime(new Date('2030-01-02T03:04:05.678Z'));
          for (const id of ids) await t.store.checkpoint(id, id);
        } finally {
          vi.useRealTimers();
        }
        const expected = ['\u{1F99C}', '\uffff', '\u00e9', 'ab', 'a ', 'a', 'B'];
        for (const limit of [1, 3, 50]) {
          const all = await allPages((p) => t.store.sessions(p), limit);
          expect(all.map((s) => s.sessionId)).toEqual(expected);
          expect(new Set(all.map((s) => s.updatedAt.getTime())).size).toBe(1);
        }
      },
    );

    withList('moves a session to the front when it gets a checkpoint or a rollback', async () => {
      for (const id of ['a', 'b', 'c']) {
        await t.store.checkpoint(id, 1);
        await sleep(3);
      }
      await t.store.checkpoint('a', 2);
      expect((await t.store.sessions()).items[0]?.sessionId).toBe('a');
      await sleep(3);
      await t.store.rollback('b', 1);
      expect((await t.store.sessions()).items.map((s) => s.sessionId)).toEqual(['b', 'a', 'c']);
    });

    withList('describes each session as info() does', async () => {
      await t.store.checkpoint('s', 1, { metadata: { title: 'chat' } });
      await t.store.fork('s', { newId: 'f' });
      const listed = (await t.store.sessions()).items;
      for (const s of listed) expect(s).toEqual(await t.store.info(s.sessionId));
    });

    withList('walks every session exactly once across pages', async () => {
      for (let i = 0; i < 23; i++) await t.store.checkpoint(`s${i}`, i);
      for (const limit of [1, 4, 23, 50]) {
        const all = await allPages((p) => t.store.sessions(p), limit);
        expect(all).toHaveLength(23);
        expect(new Set(all.map((s) => s.sessionId)).size).toBe(23);
        expect(isCatalogOrder(all)).toBe(true);
      }
    });

    withList('drops a deleted session from the list', async () => {
      await t.store.checkpoint('a', 1);
      await t.store.checkpoint('b', 1);
      await t.store.delete('a');
      expect((await t.store.sessions()).items.map((s) => s.sessionId)).toEqual(['b']);
    });

    describe('with a prefix', () => {
      /** Every session whose id starts with `prefix`, walked in pages of `limit`. */
      const listed = (prefix: string, limit: number) =>
        allPages((p) => t.store.sessions({ ...p, prefix }), limit);

      withList(
        'lists exactly the sessions whose id starts with the prefix, for odd ids, in catalog order',
        async () => {
          // Each odd id, and ids that extend it or that it does not start: `%` and `_` must not
          // match like LIKE's wildcards, `\` must not escape, case and trailing spaces count.
          const ids = new Set<string>();
          for (const id of ODD_IDS) {
            ids.add(id);
            if ([...id].length < 255) {
              ids.add(`${id}x`);
              ids.add(`x${id}`);
            }
          }
          for (const id of ids) await t.store.checkpoint(id, id);
          for (const prefix of ODD_IDS) {
            const want = [...ids].filter((id) => id.startsWith(prefix));
            const got = await listed(prefix, 7);
            expect(got.map((s) => s.sessionId).sort(compareCodePoints), prefix).toEqual(
              want.sort(compareCodePoints),
            );
            expect(isCatalogOrder(got)).toBe(true);
          }
        },
      );

      withList('lists ids that are prefixes of each other', async () => {
        const ids = ['u', 'u1', 'u12', 'u123', 'u2', 'U1', 'u1 ', 'v'];
        for (const id of ids) await t.store.checkpoint(id, id);
        const ofPrefix = async (prefix: string) =>
          (await listed(prefix, 2)).map((s) => s.sessionId).sort(compareCodePoints);
        expect(await ofPrefix('u')).toEqual(['u', 'u1', 'u1 ', 'u12', 'u123', 'u2']);
        expect(await ofPrefix('u1')).toEqual(['u1', 'u1 ', 'u12', 'u123']);
        expect(await ofPrefix('u12')).toEqual(['u12', 'u123']);
        expect(await ofPrefix('u123')).toEqual(['u123']);
        expect(await ofPrefix('u1234')).toEqual([]);
        expect(await ofPrefix('u1 ')).toEqual(['u1 ']);
      });

      withList(
        'finds ids at the edges of the range: the highest code points and emoji',
        async () => {
          const top = '\u{10FFFF}';
          const ids = ['a', `a${top}`, `a${top}${top}`, 'b', top, `${top}a`, `${top}${top}`];
          ids.push('\uffff', '\u{1F99C}', '\u{1F99C}a', '\u{1F99D}', '\ud7ff', '\ue000');
          for (const id of ids) await t.store.checkpoint(id, id);
          const ofPrefix = async (prefix: string) =>
            (await listed(prefix, 50)).map((s) => s.sessionId).sort(compareCodePoints);
          expect(await ofPrefix('a')).toEqual(['a', `a${top}`, `a${top}${top}`]);
          expect(await ofPrefix(`a${top}`)).toEqual([`a${top}`, `a${top}${top}`]);
          expect(await ofPrefix(top)).toEqual([top, `${top}a`, `${top}${top}`]);
          expect(await ofPrefix(`${top}${top}`)).toEqual([`${top}${top}`]);
          expect(await ofPrefix('\u{1F99C}')).toEqual(['\u{1F99C}', '\u{1F99C}a']);
          expect(await ofPrefix('\uffff')).toEqual(['\uffff']);
          expect(await ofPrefix('\ud7ff')).toEqual(['\ud7ff']);
        },
      );

      withList('returns an empty page for a prefix that matches nothing', async () => {
        await t.store.checkpoint('user-1/a', 1);
        expect(await t.store.sessions({ prefix: 'user-2/' })).toEqual({ items: [], cursor: null });
        expect(await t.store.sessions({ prefix: 'user-1/a/' })).toEqual({
          items: [],
          cursor: null,
        });
      });

      withList('lists every session for an empty prefix', async () => {
        for (const id of ['a', 'b']) await t.store.checkpoint(id, id);
        expect((await t.store.sessions({ prefix: '' })).items).toEqual(
          (await t.store.sessions()).items,
        );
      });

      withList(
        'walks one prefix exactly once across many pages when updatedAt ties, by id descending',
        async () => {
          const mine = Array.from({ length: 37 }, (_, i) => `user-1/${String(i).padStart(2, '0')}`);
          vi.useFakeTimers({ toFake: ['Date'] });
          try {
            // In the past, so that a checkpoint written later is newer.
            vi.setSystemTime(new Date('2020-01-02T03:04:05.678Z'));
            for (const id of mine) await t.store.checkpoint(id, id);
            for (const id of ['user-0/x', 'user-1', 'user-10/x', 'user-2/x']) {
              await t.store.checkpoint(id, id);
            }
          } finally {
            vi.useRealTimers();
          }
          const want = [...mine].sort(compareCodePoints).reverse();
          for (const limit of [1, 4, 10, 37, 1000]) {
            const all = await listed('user-1/', limit);
            expect(all.map((s) => s.sessionId)).toEqual(want);
          }
          // The same with a tie broken by time for some: the newer come first.
          await sleep(3);
          await t.store.checkpoint('user-1/05', 'again');
          await t.store.checkpoint('user-1/30', 'again');
          const again = (await listed('user-1/', 3)).map((s) => s.sessionId);
          expect(again).toEqual([
            'user-1/30',
            'user-1/05',
            ...want.filter((id) => !id.endsWith('/30') && !id.endsWith('/05')),
          ]);
        },
      );

      withList('describes each session as info() does', async () => {
        await t.store.checkpoint('p/s', 1, { metadata: { title: 'chat' } });
        await t.store.fork('p/s', { newId: 'p/f' });
        for (const s of (await t.store.sessions({ prefix: 'p/' })).items) {
          expect(s).toEqual(await t.store.info(s.sessionId));
        }
      });

      withList(
        'refuses a cursor made with another prefix, or none, with INVALID_ARGUMENT',
        async () => {
          for (const id of ['a1', 'a2', 'a3', 'b1', 'b2']) await t.store.checkpoint(id, id);
          const ofA = (await t.store.sessions({ prefix: 'a', limit: 1 })).cursor;
          const ofAll = (await t.store.sessions({ limit: 1 })).cursor;
          expect(ofA).not.toBeNull();
          expect(ofAll).not.toBeNull();
          await expectCkptError(t.store.sessions({ prefix: 'b', cursor: ofA }), 'INVALID_ARGUMENT');
          await expectCkptError(
            t.store.sessions({ prefix: 'a1', cursor: ofA }),
            'INVALID_ARGUMENT',
          );
          await expectCkptError(t.store.sessions({ cursor: ofA }), 'INVALID_ARGUMENT');
          await expectCkptError(
            t.store.sessions({ prefix: 'a', cursor: ofAll }),
            'INVALID_ARGUMENT',
          );
          expect((await t.store.sessions({ prefix: 'a', cursor: ofA })).items).toHaveLength(2);
        },
      );

      it.each([
        ['256 code points', 'x'.repeat(256)],
        ['a NUL character', 'a\0'],
        ['a lone surrogate', '\ud800'],
        ['a number', 42],
        ['null', null],
      ])('refuses a prefix with %s with INVALID_ARGUMENT naming it', async (_what, prefix) => {
        const err = await expectCkptError(
          t.store.sessions({ prefix: prefix as string }),
          'INVALID_ARGUMENT',
        );
        expect(err.details.argument).toBe('prefix');
      });
    });

    withoutList('refuses sessions() with UNSUPPORTED when the backend cannot list', async () => {
      await t.store.checkpoint('a', 1);
      await expectCkptError(t.store.sessions(), 'UNSUPPORTED');
    });
  });

  describe('paging rules', () => {
    it.each([0, -1, 1001, 1.5, Number.NaN, '5', null])(
      'refuses limit %s with INVALID_ARGUMENT',
      async (limit) => {
        await t.store.checkpoint('s', 1);
        const err = await expectCkptError(
          t.store.list('s', { limit: limit as number }),
          'INVALID_ARGUMENT',
        );
        expect(err.message).toMatch(/limit/);
      },
    );

    it('accepts limit 1000 and a null cursor', async () => {
      await t.store.checkpoint('s', 1);
      expect((await t.store.list('s', { limit: 1000, cursor: null })).items).toHaveLength(1);
    });

    it('refuses a cursor made by another method with INVALID_ARGUMENT', async () => {
      for (let i = 1; i <= 3; i++) await t.store.checkpoint('s', i, { transcript: [i, i] });
      const listCursor = (await t.store.list('s', { limit: 1 })).cursor;
      const transcriptCursor = (await t.store.transcript('s', { limit: 1 })).cursor;
      expect(listCursor).not.toBeNull();
      expect(transcriptCursor).not.toBeNull();
      await expectCkptError(t.store.transcript('s', { cursor: listCursor }), 'INVALID_ARGUMENT');
      await expectCkptError(t.store.list('s', { cursor: transcriptCursor }), 'INVALID_ARGUMENT');
      await expectCkptError(t.store.state('x').keys({ cursor: listCursor }), 'INVALID_ARGUMENT');
    });

    it('refuses a cursor of another session with INVALID_ARGUMENT', async () => {
      for (let i = 1; i <= 3; i++) await t.store.checkpoint('s', i);
      await t.store.checkpoint('other', 1);
      const cursor = (await t.store.list('s', { limit: 1 })).cursor;
      await expectCkptError(t.store.list('other', { cursor }), 'INVALID_ARGUMENT');
    });

    it.each(['', 'garbage', 'e30', '!!!', 'x'.repeat(5000)])(
      'refuses the made-up cursor %j with INVALID_ARGUMENT',
      async (cursor) => {
        await t.store.checkpoint('s', 1);
        await expectCkptError(t.store.list('s', { cursor }), 'INVALID_ARGUMENT');
        await expectCkptError(t.store.transcript('s', { cursor }), 'INVALID_ARGUMENT');
      },
    );

    withList('refuses a list cursor passed to sessions() with INVALID_ARGUMENT', async () => {
      for (let i = 1; i <= 3; i++) await t.store.checkpoint('s', i);
      const cursor = (await t.store.list('s', { limit: 1 })).cursor;
      await expectCkptError(t.store.sessions({ cursor }), 'INVALID_ARGUMENT');
    });
  });
}
