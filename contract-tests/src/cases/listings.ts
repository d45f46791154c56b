/** list, transcript and sessions, and the paging rules they share. */
import { type BackendCapabilities, compareCodePoints, type SessionInfo } from '@ckpt/core';
import { describe, expect, it, vi } from 'vitest';
import { itIf, itWith } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { allPages, allSettledOrThrow, expectCkptError, sleep } from '../util.js';

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
