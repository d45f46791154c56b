/** checkpoint, load, head, info: appending and reading back. */
import { describe, expect, it } from 'vitest';
import type { ContractContext } from '../harness.js';
import { allPages, expectCkptError, sleep } from '../util.js';

/** Appending checkpoints and reading them back. */
export function checkpointCases(t: ContractContext): void {
  describe('checkpoint and load', () => {
    it('creates the session with seq 1 and parent null on the first checkpoint', async () => {
      const cp = await t.store.checkpoint('s', { step: 1 });
      expect(cp).toMatchObject({
        sessionId: 's',
        seq: 1,
        parent: null,
        data: { step: 1 },
        metadata: {},
      });
      expect(cp.createdAt).toBeInstanceOf(Date);
    });

    it('gives each checkpoint the next seq and the previous head as parent', async () => {
      const seqs = [];
      for (let i = 0; i < 5; i++) seqs.push(await t.store.checkpoint('s', i));
      expect(seqs.map((c) => [c.seq, c.parent])).toEqual([
        [1, null],
        [2, 1],
        [3, 2],
        [4, 3],
        [5, 4],
      ]);
    });

    it('loads exactly what was saved, key order included', async () => {
      const data = { z: 1, a: { y: [1, 'two', null, true], b: 2.5 }, m: '' };
      const metadata = { zeta: 'last', alpha: 'first', '10': 'ten' };
      await t.store.checkpoint('s', data, { metadata });
      const loaded = await t.store.load('s');
      expect(loaded?.data).toEqual(data);
      expect(JSON.stringify(loaded?.data)).toBe(JSON.stringify(data));
      expect(JSON.stringify(loaded?.metadata)).toBe(JSON.stringify(metadata));
    });

    it('returns from checkpoint() the same checkpoint that load() returns', async () => {
      const written = await t.store.checkpoint('s', { a: 1, skip: undefined } as never, {
        metadata: { m: 1 },
      });
      const loaded = await t.store.load('s', written.seq);
      expect(loaded).toEqual(written);
      expect(Object.keys(written.data as object)).toEqual(['a']);
    });

    it('returns from checkpoint() data of its own, as load() would read it back', async () => {
      const data = { list: [1, { n: -0 }], inner: { x: 1 } };
      const metadata = { tags: ['a'] };
      const written = await t.store.checkpoint('s', data, { metadata });
      data.inner.x = 2;
      data.list.push(3);
      metadata.tags.push('b');
      expect(written.data).toStrictEqual({ list: [1, { n: 0 }], inner: { x: 1 } });
      expect(written.metadata).toStrictEqual({ tags: ['a'] });
      expect(await t.store.load('s')).toStrictEqual(written);
    });

    it('loads the head when no seq is given', async () => {
      await t.store.checkpoint('s', 'one');
      await t.store.checkpoint('s', 'two');
      expect((await t.store.load('s'))?.data).toBe('two');
      expect((await t.store.load('s', 1))?.data).toBe('one');
    });

    it('returns null when loading an unknown session or seq', async () => {
      expect(await t.store.load('nobody')).toBeNull();
      await t.store.checkpoint('s', 1);
      expect(await t.store.load('s', 2)).toBeNull();
      expect(await t.store.load('s', 999_999)).toBeNull();
    });

    it('stores metadata as {} when none is given', async () => {
      await t.store.checkpoint('s', 1);
      expect((await t.store.load('s'))?.metadata).toEqual({});
    });

    it('records createdAt with millisecond precision at the time of the call', async () => {
      const before = Date.now();
      const cp = await t.store.checkpoint('s', 1);
      const after = Date.now();
      const loaded = await t.store.load('s');
      expect(loaded?.createdAt.getTime()).toBe(cp.createdAt.getTime());
      expect(cp.createdAt.getTime()).toBeGreaterThanOrEqual(before);
      expect(cp.createdAt.getTime()).toBeLessThanOrEqual(after);
    });

    it('reports the head, or null for an unknown session', async () => {
      expect(await t.store.head('s')).toBeNull();
      await t.store.checkpoint('s', 1);
      await t.store.checkpoint('s', 2);
      expect(await t.store.head('s')).toBe(2);
    });

    it('describes a session with info()', async () => {
      const first = await t.store.checkpoint('s', 1, { metadata: { step: 'one' } });
      await sleep(3);
      const second = await t.store.checkpoint('s', 2, { metadata: { step: 'two' } });
      const info = await t.store.info('s');
      expect(info).toEqual({
        sessionId: 's',
        head: 2,
        checkpoints: 2,
        forkedFrom: null,
        metadata: { step: 'two' },
        createdAt: first.createdAt,
        updatedAt: second.createdAt,
        tags: {},
      });
    });

    it('returns null from info() for an unknown session', async () => {
      expect(await t.store.info('nobody')).toBeNull();
    });

    it('keeps sessions apart', async () => {
      await t.store.checkpoint('a', 'for a');
      await t.store.checkpoint('b', 'for b');
      await t.store.checkpoint('b', 'for b again');
      expect((await t.store.load('a'))?.data).toBe('for a');
      expect(await t.store.head('a')).toBe(1);
      expect(await t.store.head('b')).toBe(2);
    });

    it('lets several stores on the same storage see each other at once', async () => {
      const other = await t.connect();
      await t.store.checkpoint('s', 'from the first');
      expect((await other.load('s'))?.data).toBe('from the first');
      await other.checkpoint('s', 'from the second');
      expect((await t.store.load('s'))?.seq).toBe(2);
    });
  });

  describe('rollback and history', () => {
    async function threeSteps() {
      for (const step of ['one', 'two', 'three']) {
        await t.store.checkpoint('s', step, { metadata: { step }, transcript: [step] });
      }
    }

    it('moves the head back and returns the new head', async () => {
      await threeSteps();
      expect(await t.store.rollback('s', 1)).toBe(1);
      expect(await t.store.head('s')).toBe(1);
      expect((await t.store.load('s'))?.data).toBe('one');
    });

    it('loads all of the new head after a rollback: its parent, metadata and time too', async () => {
      const saved = [];
      for (const step of ['one', 'two', 'three']) {
        saved.push(await t.store.checkpoint('s', step, { metadata: { step } }));
        // Distinct times, so that a head that kept its old time shows.
        await new Promise((resolve) => setTimeout(resolve, 3));
      }
      for (const seq of [2, 1, 3]) {
        await t.store.rollback('s', seq);
        expect(await t.store.load('s')).toEqual(saved[seq - 1]);
      }
    });

    it('deletes nothing, so rolling forward again works', async () => {
      await threeSteps();
      await t.store.rollback('s', 1);
      expect((await t.store.info('s'))?.checkpoints).toBe(3);
      expect(await t.store.rollback('s', 3)).toBe(3);
      expect((await t.store.load('s'))?.data).toBe('three');
      expect(await t.store.history('s')).toEqual([1, 2, 3]);
    });

    it('starts a new branch at max + 1 when writing after a rollback', async () => {
      await threeSteps();
      await t.store.rollback('s', 1);
      const cp = await t.store.checkpoint('s', 'branch');
      expect(cp.seq).toBe(4);
      expect(cp.parent).toBe(1);
      expect((await t.store.load('s', 2))?.data).toBe('two');
      expect((await t.store.load('s', 3))?.data).toBe('three');
    });

    it('follows parents from the head in history(), oldest first', async () => {
      await threeSteps();
      await t.store.rollback('s', 2);
      await t.store.checkpoint('s', 'b1');
      await t.store.checkpoint('s', 'b2');
      expect(await t.store.history('s')).toEqual([1, 2, 4, 5]);
      await t.store.rollback('s', 3);
      expect(await t.store.history('s')).toEqual([1, 2, 3]);
    });

    // Servers cap recursive queries at 1,000 steps by default (MariaDB by cutting the result
    // short, without an error): a long timeline must come back whole all the same.
    it('follows a timeline longer than 1,000 checkpoints in history(), transcript() and fork()', async () => {
      const steps = 1100;
      for (let i = 1; i <= steps; i++) await t.store.checkpoint('s', i, { transcript: [i] });
      const all = Array.from({ length: steps }, (_, i) => i + 1);
      expect(await t.store.history('s')).toEqual(all);
      const items = await allPages((p) => t.store.transcript('s', p), 1000);
      expect(items.map((e) => e.item)).toEqual(all.toReversed());
      const fork = await t.store.fork('s');
      expect(await t.store.history(fork)).toEqual(all);
    });

    it('returns an empty history for an unknown session', async () => {
      expect(await t.store.history('nobody')).toEqual([]);
    });

    it('updates updatedAt and the session metadata to the new head on rollback', async () => {
      await threeSteps();
      const before = await t.store.info('s');
      await sleep(3);
      await t.store.rollback('s', 1);
      const after = await t.store.info('s');
      expect(after?.metadata).toEqual({ step: 'one' });
      expect(after?.updatedAt.getTime()).toBeGreaterThan(before!.updatedAt.getTime());
      expect(after?.createdAt).toEqual(before?.createdAt);
    });

    it('refuses a rollback to a seq that is not stored with NOT_FOUND and changes nothing', async () => {
      await threeSteps();
      await expectCkptError(t.store.rollback('s', 4), 'NOT_FOUND');
      expect(await t.store.head('s')).toBe(3);
    });

    it('refuses a rollback of an unknown session with NOT_FOUND', async () => {
      await expectCkptError(t.store.rollback('nobody', 1), 'NOT_FOUND');
      expect(await t.store.info('nobody')).toBeNull();
    });

    it('rolls back when expectedHead matches and refuses with CONFLICT when it does not', async () => {
      await threeSteps();
      const err = await expectCkptError(t.store.rollback('s', 1, { expectedHead: 2 }), 'CONFLICT');
      expect(err.details.actualHead).toBe(3);
      expect(await t.store.head('s')).toBe(3);
      expect(await t.store.rollback('s', 1, { expectedHead: 3 })).toBe(1);
    });
  });

  describe('expectedHead on checkpoint', () => {
    it('writes when expectedHead is the current head', async () => {
      await t.store.checkpoint('s', 1);
      const cp = await t.store.checkpoint('s', 2, { expectedHead: 1 });
      expect(cp.seq).toBe(2);
    });

    it('refuses a stale expectedHead with CONFLICT carrying the actual head, writing nothing', async () => {
      await t.store.checkpoint('s', 1);
      await t.store.checkpoint('s', 2);
      const err = await expectCkptError(
        t.store.checkpoint('s', 3, { expectedHead: 1 }),
        'CONFLICT',
      );
      expect(err.details.actualHead).toBe(2);
      expect((err as unknown as { actualHead: number }).actualHead).toBe(2);
      expect((await t.store.info('s'))?.checkpoints).toBe(2);
    });

    it('creates the session with expectedHead null only when it does not exist', async () => {
      const cp = await t.store.checkpoint('s', 1, { expectedHead: null });
      expect(cp.seq).toBe(1);
      const err = await expectCkptError(
        t.store.checkpoint('s', 2, { expectedHead: null }),
        'CONFLICT',
      );
      expect(err.details.actualHead).toBe(1);
    });

    it('refuses a numeric expectedHead for a session that does not exist, with actual head null', async () => {
      const err = await expectCkptError(
        t.store.checkpoint('s', 1, { expectedHead: 1 }),
        'CONFLICT',
      );
      expect(err.details.actualHead).toBeNull();
      expect(await t.store.info('s')).toBeNull();
    });

    it('compares expectedHead with the head, not the highest seq, after a rollback', async () => {
      await t.store.checkpoint('s', 1);
      await t.store.checkpoint('s', 2);
      await t.store.rollback('s', 1);
      await expectCkptError(t.store.checkpoint('s', 3, { expectedHead: 2 }), 'CONFLICT');
      expect((await t.store.checkpoint('s', 3, { expectedHead: 1 })).seq).toBe(3);
    });
  });
}
