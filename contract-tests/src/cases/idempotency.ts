/** idempotencyKey retries and update() read-modify-write. */
import { type CheckpointStore, isCkptError } from '@ckpt/core';
import { describe, expect, it } from 'vitest';
import type { ContractContext } from '../harness.js';
import { expectCkptError } from '../util.js';

/** Retries and read-modify-write. */
export function idempotencyCases(t: ContractContext): void {
  describe('idempotencyKey', () => {
    it('returns the first checkpoint on a retry with the same key and writes nothing', async () => {
      const first = await t.store.checkpoint(
        's',
        { v: 1 },
        { idempotencyKey: 'k1', transcript: ['a'] },
      );
      const retry = await t.store.checkpoint(
        's',
        { v: 1 },
        { idempotencyKey: 'k1', transcript: ['a'] },
      );
      expect(retry).toEqual(first);
      expect((await t.store.info('s'))?.checkpoints).toBe(1);
      expect((await t.store.transcript('s')).items).toHaveLength(1);
    });

    it('returns the first result even when the retry carries other data or a stale expectedHead', async () => {
      const first = await t.store.checkpoint('s', 'first', {
        idempotencyKey: 'k',
        expectedHead: null,
      });
      await t.store.checkpoint('s', 'later');
      const retry = await t.store.checkpoint('s', 'different', {
        idempotencyKey: 'k',
        expectedHead: null,
      });
      expect(retry).toEqual(first);
      expect(await t.store.head('s')).toBe(2);
    });

    it('writes separately for different keys', async () => {
      await t.store.checkpoint('s', 1, { idempotencyKey: 'a' });
      const second = await t.store.checkpoint('s', 2, { idempotencyKey: 'b' });
      expect(second.seq).toBe(2);
    });

    it('scopes keys to their session', async () => {
      await t.store.checkpoint('s1', 1, { idempotencyKey: 'same' });
      await t.store.checkpoint('s1', 2);
      const other = await t.store.checkpoint('s2', 'mine', { idempotencyKey: 'same' });
      expect(other).toMatchObject({ sessionId: 's2', seq: 1, data: 'mine' });
    });

    it('forgets the keys of a deleted session', async () => {
      await t.store.checkpoint('s', 'old', { idempotencyKey: 'k' });
      await t.store.delete('s');
      const cp = await t.store.checkpoint('s', 'new', { idempotencyKey: 'k' });
      expect(cp).toMatchObject({ seq: 1, data: 'new' });
    });

    it('does not carry keys into a fork', async () => {
      await t.store.checkpoint('s', 'old', { idempotencyKey: 'k' });
      await t.store.fork('s', { newId: 'f' });
      const cp = await t.store.checkpoint('f', 'new', { idempotencyKey: 'k' });
      expect(cp).toMatchObject({ seq: 2, data: 'new' });
    });

    it('refuses with CONFLICT, writing nothing, when the first checkpoint was pruned since', async () => {
      await t.store.checkpoint('s', 'first', { idempotencyKey: 'k' });
      await t.store.checkpoint('s', 'second');
      await t.store.prune('s', { keepLast: 1 });
      await expectCkptError(t.store.checkpoint('s', 'first', { idempotencyKey: 'k' }), 'CONFLICT');
      expect(await t.store.head('s')).toBe(2);
    });
  });

  describe('loadByKey', () => {
    it('loads the checkpoint written with the key, on any branch, head or not', async () => {
      const first = await t.store.checkpoint(
        's',
        { v: 1 },
        { idempotencyKey: 'k1', metadata: { m: 1 } },
      );
      await t.store.checkpoint('s', { v: 2 }, { idempotencyKey: 'k2' });
      await t.store.rollback('s', 1);
      const branch = await t.store.checkpoint('s', { v: 3 }, { idempotencyKey: 'k3' });
      expect(await t.store.loadByKey('s', 'k1')).toEqual(first);
      expect((await t.store.loadByKey('s', 'k2'))?.data).toEqual({ v: 2 });
      expect(await t.store.loadByKey('s', 'k3')).toEqual(branch);
    });

    it('gives null for a key never used, an unknown session, or another session', async () => {
      await t.store.checkpoint('s', 1, { idempotencyKey: 'k' });
      await t.store.checkpoint('s', 2);
      expect(await t.store.loadByKey('s', 'other')).toBeNull();
      expect(await t.store.loadByKey('nobody', 'k')).toBeNull();
      expect(await t.store.loadByKey('s2', 'k')).toBeNull();
    });

    it('gives null once the checkpoint was pruned, the session deleted, or in a fork', async () => {
      await t.store.checkpoint('s', 1, { idempotencyKey: 'old' });
      await t.store.checkpoint('s', 2, { idempotencyKey: 'new' });
      await t.store.fork('s', { newId: 'f' });
      expect(await t.store.loadByKey('f', 'new')).toBeNull();
      await t.store.prune('s', { keepLast: 1 });
      expect(await t.store.loadByKey('s', 'old')).toBeNull();
      expect((await t.store.loadByKey('s', 'new'))?.seq).toBe(2);
      await t.store.delete('s');
      expect(await t.store.loadByKey('s', 'new')).toBeNull();
      await t.store.checkpoint('s', 'again');
      expect(await t.store.loadByKey('s', 'new')).toBeNull();
    });

    it('finds each key as soon as its checkpoint is acknowledged', async () => {
      for (let i = 0; i < 8; i++) {
        const cp = await t.store.checkpoint('s', i, { idempotencyKey: `k${i}` });
        expect(await t.store.loadByKey('s', `k${i}`)).toEqual(cp);
      }
    });
  });

  describe('update', () => {
    it('creates the session, passing null to fn, when it does not exist', async () => {
      const seen: unknown[] = [];
      const cp = await t.store.update('s', (current) => {
        seen.push(current);
        return { count: 1 };
      });
      expect(seen).toEqual([null]);
      expect(cp).toMatchObject({ seq: 1, data: { count: 1 } });
    });

    it('passes the head to fn and saves what it returns with metadata and transcript', async () => {
      await t.store.checkpoint('s', { count: 1 });
      const cp = await t.store.update(
        's',
        async (current) => ({
          count: ((current?.data as { count: number } | undefined)?.count ?? 0) + 1,
        }),
        { metadata: { by: 'update' }, transcript: ['bumped'] },
      );
      expect(cp).toMatchObject({
        seq: 2,
        parent: 1,
        data: { count: 2 },
        metadata: { by: 'update' },
      });
      expect((await t.store.transcript('s')).items[0]?.item).toBe('bumped');
    });

    it('retries on CONFLICT and gives up after maxAttempts', async () => {
      await t.store.checkpoint('s', 0);
      let calls = 0;
      const rival = async (store: CheckpointStore) => store.checkpoint('s', 'rival');
      const err = await expectCkptError(
        t.store.update(
          's',
          async () => {
            calls++;
            await rival(t.store); // someone else always gets in first
            return 'mine';
          },
          { maxAttempts: 3 },
        ),
        'CONFLICT',
      );
      expect(calls).toBe(3);
      expect(isCkptError(err, 'CONFLICT')).toBe(true);
      expect((await t.store.load('s'))?.data).toBe('rival');
    });

    it('succeeds on a later attempt when the rival stops', async () => {
      await t.store.checkpoint('s', 0);
      let calls = 0;
      const cp = await t.store.update('s', async (current) => {
        calls++;
        if (calls < 3) await t.store.checkpoint('s', 'rival');
        return `${String(current?.data)}+mine`;
      });
      expect(calls).toBe(3);
      expect(cp.data).toBe('rival+mine');
    });

    it.each([0, -1, 1.5, '3'])('refuses maxAttempts %j', async (bad) => {
      await expectCkptError(
        t.store.update('s', () => 1, { maxAttempts: bad as number }),
        'INVALID_ARGUMENT',
      );
      expect(await t.store.info('s')).toBeNull();
    });

    it('refuses a value fn returns that JSON cannot carry, writing nothing', async () => {
      const err = await expectCkptError(
        t.store.update('s', () => ({ at: new Date() }) as never),
        'INVALID_ARGUMENT',
      );
      expect(err.message).toContain('data.at');
      expect(await t.store.info('s')).toBeNull();
    });

    it('passes an error fn throws to the caller as it is, writing nothing', async () => {
      await t.store.checkpoint('s', 'before');
      const mine = new RangeError('the agent gave up');
      const err = await t.store.update('s', () => Promise.reject(mine)).catch((e: unknown) => e);
      expect(err).toBe(mine);
      expect(await t.store.history('s')).toEqual([1]);
    });
  });
}
