/** fork, prune and delete: making, trimming and removing sessions. */
import { describe, expect, it } from 'vitest';
import type { ContractContext } from '../harness.js';
import { expectCkptError } from '../util.js';

/** Everything the source of a fork holds, as the reader sees it. */
async function snapshot(t: ContractContext, id: string) {
  const store = t.store;
  const list = await store.list(id, { limit: 1000 });
  const loaded = [];
  for (const info of list.items) loaded.push(await store.load(id, info.seq));
  const info = await store.info(id);
  return {
    head: info?.head ?? null,
    checkpoints: info?.checkpoints ?? 0,
    history: await store.history(id),
    loaded,
    transcript: (await store.transcript(id, { limit: 1000 })).items,
  };
}

/** fork, prune and delete. */
export function lifecycleCases(t: ContractContext): void {
  // 1 - 2 - 3 on the main line, then a branch 2 - 4 - 5 with the head at 5.
  async function branchy(id = 's') {
    for (const step of [1, 2, 3]) {
      await t.store.checkpoint(id, { step }, { metadata: { step }, transcript: [`item ${step}`] });
    }
    await t.store.rollback(id, 2);
    for (const step of [4, 5]) {
      await t.store.checkpoint(id, { step }, { metadata: { step }, transcript: [`item ${step}`] });
    }
  }

  describe('fork', () => {
    it('copies atSeq and its ancestors with the same seqs, data, metadata and transcript', async () => {
      await branchy();
      const id = await t.store.fork('s', { atSeq: 4, newId: 'f' });
      expect(id).toBe('f');
      expect(await t.store.head('f')).toBe(4);
      expect(await t.store.history('f')).toEqual([1, 2, 4]);
      for (const seq of [1, 2, 4]) {
        const [a, b] = [await t.store.load('s', seq), await t.store.load('f', seq)];
        expect(b).toEqual({ ...a, sessionId: 'f' });
      }
      expect(await t.store.load('f')).toEqual({ ...(await t.store.load('s', 4)), sessionId: 'f' });
      const items = (await t.store.transcript('f')).items.map((e) => e.item);
      expect(items).toEqual(['item 4', 'item 2', 'item 1']);
    });

    it('leaves other branches out of the fork', async () => {
      await branchy();
      await t.store.fork('s', { atSeq: 5, newId: 'f' });
      expect(await t.store.load('f', 3)).toBeNull();
      expect((await t.store.list('f')).items.map((c) => c.seq)).toEqual([5, 4, 2, 1]);
      expect((await t.store.info('f'))?.checkpoints).toBe(4);
    });

    it('forks at the head by default, under a random UUID by default', async () => {
      await branchy();
      const id = await t.store.fork('s');
      expect(id).toMatch(/^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/);
      expect(await t.store.head(id)).toBe(5);
      expect(await t.store.fork('s')).not.toBe(id);
    });

    it('records where the fork came from in info().forkedFrom', async () => {
      await branchy();
      await t.store.fork('s', { atSeq: 2, newId: 'f' });
      const info = await t.store.info('f');
      expect(info?.forkedFrom).toEqual({ sessionId: 's', seq: 2 });
      expect(info?.metadata).toEqual({ step: 2 });
      expect(info?.checkpoints).toBe(2);
      expect((await t.store.info('s'))?.forkedFrom).toBeNull();
    });

    it('gives the fork its own next seq: its highest seq + 1', async () => {
      await branchy();
      await t.store.fork('s', { atSeq: 2, newId: 'f' });
      const cp = await t.store.checkpoint('f', 'fork step');
      expect(cp).toMatchObject({ seq: 3, parent: 2 });
    });

    it('keeps the fork unchanged when the source is written, rolled back, pruned or deleted', async () => {
      await branchy();
      await t.store.fork('s', { atSeq: 4, newId: 'f' });
      const before = await snapshot(t, 'f');
      await t.store.checkpoint('s', 'more', { transcript: ['more'] });
      await t.store.rollback('s', 1);
      await t.store.prune('s', { keepLast: 1 });
      expect(await snapshot(t, 'f')).toEqual(before);
      await t.store.delete('s');
      expect(await snapshot(t, 'f')).toEqual(before);
    });

    it('keeps the source unchanged when the fork is written, rolled back, pruned or deleted', async () => {
      await branchy();
      const before = await snapshot(t, 's');
      await t.store.fork('s', { atSeq: 4, newId: 'f' });
      await t.store.checkpoint('f', 'fork step', { transcript: ['fork item'] });
      await t.store.rollback('f', 1);
      await t.store.checkpoint('f', 'fork step 2');
      await t.store.prune('f', { keepLast: 1 });
      expect(await snapshot(t, 's')).toEqual(before);
      await t.store.delete('f');
      expect(await snapshot(t, 's')).toEqual(before);
    });

    it('refuses a fork to an id that exists with CONFLICT, changing neither session', async () => {
      await branchy();
      await t.store.checkpoint('taken', 'mine');
      await expectCkptError(t.store.fork('s', { newId: 'taken' }), 'CONFLICT');
      await expectCkptError(t.store.fork('s', { newId: 's' }), 'CONFLICT');
      expect((await t.store.load('taken'))?.data).toBe('mine');
      expect((await t.store.info('taken'))?.checkpoints).toBe(1);
    });

    it('refuses a fork of an unknown session or seq with NOT_FOUND, creating nothing', async () => {
      await expectCkptError(t.store.fork('nobody', { newId: 'f' }), 'NOT_FOUND');
      await branchy();
      await expectCkptError(t.store.fork('s', { atSeq: 6, newId: 'f' }), 'NOT_FOUND');
      expect(await t.store.info('f')).toBeNull();
    });

    it('copies only the surviving ancestors of a pruned session', async () => {
      await branchy();
      await t.store.prune('s', { keepLast: 2 });
      await t.store.fork('s', { newId: 'f' });
      expect(await t.store.history('f')).toEqual([4, 5]);
    });
  });

  describe('prune', () => {
    it('keeps the keepLast highest seqs and returns how many it removed', async () => {
      for (let i = 1; i <= 6; i++) await t.store.checkpoint('s', i);
      expect(await t.store.prune('s', { keepLast: 2 })).toBe(4);
      expect((await t.store.list('s')).items.map((c) => c.seq)).toEqual([6, 5]);
      expect(await t.store.load('s', 4)).toBeNull();
      expect((await t.store.info('s'))?.checkpoints).toBe(2);
    });

    it('keeps the head as well when it is behind the newest', async () => {
      for (let i = 1; i <= 6; i++) await t.store.checkpoint('s', i);
      await t.store.rollback('s', 2);
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(4);
      expect((await t.store.list('s')).items.map((c) => c.seq)).toEqual([6, 2]);
      expect(await t.store.head('s')).toBe(2);
      expect((await t.store.load('s'))?.data).toBe(2);
    });

    it('stops history at the oldest surviving ancestor', async () => {
      for (let i = 1; i <= 5; i++) await t.store.checkpoint('s', i);
      await t.store.prune('s', { keepLast: 3 });
      expect(await t.store.history('s')).toEqual([3, 4, 5]);
    });

    it('removes the transcript items of the checkpoints it removes', async () => {
      for (let i = 1; i <= 4; i++) await t.store.checkpoint('s', i, { transcript: [`t${i}`] });
      await t.store.prune('s', { keepLast: 2 });
      expect((await t.store.transcript('s')).items.map((e) => e.item)).toEqual(['t4', 't3']);
    });

    it('removes nothing and returns 0 when keepLast covers every checkpoint', async () => {
      for (let i = 1; i <= 3; i++) await t.store.checkpoint('s', i);
      expect(await t.store.prune('s', { keepLast: 3 })).toBe(0);
      expect(await t.store.prune('s', { keepLast: 1000 })).toBe(0);
      expect((await t.store.info('s'))?.checkpoints).toBe(3);
    });

    it('returns 0 for an unknown session', async () => {
      expect(await t.store.prune('nobody', { keepLast: 1 })).toBe(0);
    });

    it('never reuses a pruned seq', async () => {
      for (let i = 1; i <= 4; i++) await t.store.checkpoint('s', i);
      await t.store.rollback('s', 1);
      await t.store.prune('s', { keepLast: 1 });
      const cp = await t.store.checkpoint('s', 'next');
      expect(cp).toMatchObject({ seq: 5, parent: 1 });
    });
  });

  describe('delete', () => {
    it('removes every checkpoint on every branch and the transcript', async () => {
      await branchy();
      expect(await t.store.delete('s')).toBe(true);
      expect(await t.store.info('s')).toBeNull();
      expect(await t.store.head('s')).toBeNull();
      for (let seq = 1; seq <= 5; seq++) expect(await t.store.load('s', seq)).toBeNull();
      expect(await t.store.history('s')).toEqual([]);
      expect(await t.store.list('s')).toEqual({ items: [], cursor: null });
      expect(await t.store.transcript('s')).toEqual({ items: [], cursor: null });
    });

    it('returns false for an unknown session', async () => {
      expect(await t.store.delete('nobody')).toBe(false);
      await t.store.checkpoint('s', 1);
      expect(await t.store.delete('s')).toBe(true);
      expect(await t.store.delete('s')).toBe(false);
    });

    it('lets the id be used again, starting at seq 1 with nothing of the old session', async () => {
      await branchy();
      await t.store.delete('s');
      const cp = await t.store.checkpoint('s', 'fresh');
      expect(cp).toMatchObject({ seq: 1, parent: null });
      expect(await t.store.history('s')).toEqual([1]);
      expect((await t.store.list('s')).items).toHaveLength(1);
      expect(await t.store.load('s', 2)).toBeNull();
      expect((await t.store.transcript('s')).items).toEqual([]);
      expect((await t.store.info('s'))?.forkedFrom).toBeNull();
    });

    it('leaves other sessions alone', async () => {
      await branchy('s');
      await branchy('other');
      await t.store.delete('s');
      expect((await t.store.info('other'))?.checkpoints).toBe(5);
    });
  });
}
