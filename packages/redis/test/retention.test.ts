/**
 * Retention on the backend itself, on a single server and on a cluster: pins on every read,
 * prune by rule, and deleteIdle's atomic decision with the catalog entries it removes.
 */

import type { AppendInput, ExportedStoredCheckpoint } from '@ckpt/core/adapter';
import type { RedisBackend } from '@ckpt/redis';
import { describe, expect, it } from 'vitest';
import { sessionKeys } from '../src/schema.js';
import { backendsOn, keysOf, servers } from './support.js';

describe.each(servers)('redis retention on $name', ({ cluster, up }) => {
  const fresh = backendsOn(cluster);

  /** Append a checkpoint with data `data` at time `now`; its seq. */
  async function write(
    backend: RedisBackend,
    sessionId: string,
    now: number,
    more: Partial<AppendInput> = {},
  ): Promise<number> {
    const result = await backend.append({
      sessionId,
      data: JSON.stringify(now),
      metadata: '{}',
      transcript: '[]',
      expectedHead: undefined,
      idempotencyKey: undefined,
      now,
      needs: [],
      ...more,
    });
    if (result.status !== 'written') throw new Error(`not written: ${result.status}`);
    return result.seq;
  }

  /** A session of `count` checkpoints made at 1000, 2000, … ms. */
  async function session(backend: RedisBackend, sessionId: string, count: number) {
    for (let i = 1; i <= count; i++) await write(backend, sessionId, i * 1000);
  }

  const seqsOf = async (backend: RedisBackend, sessionId: string) =>
    (await backend.listCheckpoints(sessionId, { beforeSeq: null, limit: 1000 }))
      .map((c) => c.seq)
      .reverse();

  const pinsOf = async (backend: RedisBackend, sessionId: string) =>
    (await backend.listCheckpoints(sessionId, { beforeSeq: null, limit: 1000 }))
      .filter((c) => c.pinned)
      .map((c) => [c.seq, c.pinNote]);

  describe.skipIf(!up)('pins', () => {
    it('pins a stored checkpoint with or without a note, and says what it did not find', async () => {
      const backend = fresh();
      await session(backend, 's', 3);
      expect(await backend.pin({ sessionId: 's', seq: 1, note: 'first' })).toEqual({
        status: 'done',
      });
      expect(await backend.pin({ sessionId: 's', seq: 2, note: null })).toEqual({
        status: 'done',
      });
      expect(await backend.pin({ sessionId: 's', seq: 3, note: '' })).toEqual({ status: 'done' });
      expect(await backend.pin({ sessionId: 's', seq: 9, note: null })).toEqual({
        status: 'not_found',
        missing: 'seq',
      });
      expect(await backend.pin({ sessionId: 'nobody', seq: 1, note: null })).toEqual({
        status: 'not_found',
        missing: 'session',
      });
      expect(await pinsOf(backend, 's')).toEqual([
        [3, ''],
        [2, null],
        [1, 'first'],
      ]);
      // Pinning a pinned one replaces its note.
      await backend.pin({ sessionId: 's', seq: 1, note: 'still first' });
      expect((await backend.load('s', 1))?.pinNote).toBe('still first');
      expect(await backend.session('nobody')).toBeNull();
    });

    it('shows pins on every read of a checkpoint: load, loadByKey, a replayed append, list, export', async () => {
      const backend = fresh();
      await write(backend, 's', 1000, { idempotencyKey: 'k' });
      await write(backend, 's', 2000);
      await backend.pin({ sessionId: 's', seq: 1, note: 'why: "kept"' });
      const pinned = { pinned: true, pinNote: 'why: "kept"' };
      const unpinned = { pinned: false, pinNote: null };
      expect(await backend.load('s', 1)).toMatchObject({ seq: 1, ...pinned });
      expect(await backend.load('s', 2)).toMatchObject({ seq: 2, ...unpinned });
      expect(await backend.loadByKey('s', 'k')).toMatchObject({ seq: 1, ...pinned });
      const replayed = await backend.append({
        sessionId: 's',
        data: '0',
        metadata: '{}',
        transcript: '[]',
        expectedHead: undefined,
        idempotencyKey: 'k',
        now: 3000,
        needs: [],
      });
      expect(replayed).toMatchObject({ status: 'replayed', seq: 1, checkpoint: pinned });
      expect(await backend.listCheckpoints('s', { beforeSeq: null, limit: 10 })).toMatchObject([
        { seq: 2, ...unpinned },
        { seq: 1, ...pinned },
      ]);
      expect(await backend.exportCheckpoints('s', { afterSeq: null, limit: 10 })).toMatchObject([
        { seq: 1, ...pinned },
        { seq: 2, ...unpinned },
      ]);
    });

    it("keeps the head's pin in the copy the session hash holds, through pin, unpin, rollback and append", async () => {
      const backend = fresh();
      await session(backend, 's', 2);
      const headPin = async () => {
        const head = await backend.load('s', null);
        return [head?.seq, head?.pinned, head?.pinNote];
      };
      await backend.pin({ sessionId: 's', seq: 2, note: 'head' });
      expect(await headPin()).toEqual([2, true, 'head']);
      await backend.pin({ sessionId: 's', seq: 1, note: 'older' });
      await backend.rollback({ sessionId: 's', seq: 1, expectedHead: undefined, now: 3000 });
      expect(await headPin()).toEqual([1, true, 'older']);
      expect(await backend.unpin('s', 1)).toBe(true);
      expect(await headPin()).toEqual([1, false, null]);
      await backend.pin({ sessionId: 's', seq: 1, note: null });
      expect(await headPin()).toEqual([1, true, null]);
      await write(backend, 's', 4000);
      expect(await headPin()).toEqual([3, false, null]);
      // Every head read above came from the copy, which is the stored pin.
      for (const seq of [1, 2, 3]) {
        const { pinned, pinNote } = (await backend.load('s', seq))!;
        expect([pinned, pinNote]).toEqual(
          seq === 3 ? [false, null] : [true, seq === 2 ? 'head' : null],
        );
      }
    });

    it('reads the head by script when its copy holds no pin, as a head moved by an earlier version', async () => {
      const backend = fresh();
      await session(backend, 's', 2);
      await backend.pin({ sessionId: 's', seq: 2, note: 'n' });
      const key = sessionKeys(backend.namespace, 's').session;
      await backend.client.hdel(key, 'hpin');
      expect(await backend.load('s', null)).toMatchObject({ seq: 2, pinned: true, pinNote: 'n' });
      // A copy of the pin of another seq than the head's is not used either.
      await backend.client.hset(key, 'hpin', '1 ');
      expect(await backend.load('s', null)).toMatchObject({ seq: 2, pinned: true, pinNote: 'n' });
    });

    it('unpins: true once for a pinned checkpoint, false for one not pinned or not stored', async () => {
      const backend = fresh();
      await session(backend, 's', 2);
      await backend.pin({ sessionId: 's', seq: 1, note: null });
      expect(await backend.unpin('s', 1)).toBe(true);
      expect(await backend.unpin('s', 1)).toBe(false);
      expect(await backend.unpin('s', 2)).toBe(false);
      expect(await backend.unpin('s', 7)).toBe(false);
      expect(await backend.unpin('nobody', 1)).toBe(false);
      expect(await pinsOf(backend, 's')).toEqual([]);
      // The pins hash exists only while the session holds a pin: that is what a sweep asks.
      expect(await backend.client.exists(sessionKeys(backend.namespace, 's').pins)).toBe(0);
    });

    it('never changes updatedAt, nor the place of the session in the catalog', async () => {
      const backend = fresh();
      await session(backend, 'a', 2);
      await session(backend, 'b', 1);
      const before = await backend.sessions({ after: null, limit: 10, prefix: '' });
      await backend.pin({ sessionId: 'a', seq: 1, note: null });
      await backend.unpin('a', 1);
      await backend.pin({ sessionId: 'a', seq: 2, note: 'x' });
      await backend.prune('a', { keepLast: 1, createdBefore: null });
      const after = await backend.sessions({ after: null, limit: 10, prefix: '' });
      expect(after.map((s) => [s.sessionId, s.updatedAt])).toEqual(
        before.map((s) => [s.sessionId, s.updatedAt]),
      );
    });

    it('copies no pins into a fork, and a fork drops pins a deleted session of its id left', async () => {
      const backend = fresh();
      await session(backend, 's', 3);
      await backend.pin({ sessionId: 's', seq: 2, note: null });
      await backend.pin({ sessionId: 's', seq: 3, note: 'head' });
      // As a version that knew no pins would leave them: the session deleted, its pins not.
      const stale = sessionKeys(backend.namespace, 'f').pins;
      await backend.client.hset(stale, '1', '-');
      expect(await backend.fork({ sessionId: 's', atSeq: null, newId: 'f', now: 5000 })).toEqual({
        status: 'done',
        seq: 3,
      });
      expect(await pinsOf(backend, 'f')).toEqual([]);
      expect(await backend.load('f', null)).toMatchObject({ pinned: false, pinNote: null });
      expect(await backend.deleteIdle('f', 6000, true)).toEqual({
        status: 'deleted',
        checkpoints: 3,
      });
      expect(await pinsOf(backend, 's')).toEqual([
        [3, 'head'],
        [2, null],
      ]);
    });

    it('starts a new session without the pins a deleted session of its id left', async () => {
      const backend = fresh();
      await backend.client.hset(sessionKeys(backend.namespace, 's').pins, '1', '-');
      await write(backend, 's', 1000);
      expect(await backend.load('s', 1)).toMatchObject({ pinned: false });
      expect(await backend.deleteIdle('s', 2000, true)).toEqual({
        status: 'deleted',
        checkpoints: 1,
      });
    });

    it('imports pins as given, and an import that replaces a session drops its old pins', async () => {
      const backend = fresh();
      await session(backend, 's', 3);
      await backend.pin({ sessionId: 's', seq: 1, note: 'old' });
      await backend.pin({ sessionId: 's', seq: 3, note: null });
      const exported = await backend.exportCheckpoints('s', { afterSeq: null, limit: 10 });
      const imported = (sessionId: string, checkpoints: ExportedStoredCheckpoint[]) =>
        backend.importSession({
          sessionId,
          head: checkpoints.at(-1)!.seq,
          forkedFrom: null,
          createdAt: 1000,
          updatedAt: 3000,
          checkpoints,
          replace: true,
        });
      expect(await imported('copy', exported)).toBe('imported');
      expect(await backend.exportCheckpoints('copy', { afterSeq: null, limit: 10 })).toEqual(
        exported,
      );
      expect(await backend.load('copy', null)).toMatchObject({ seq: 3, pinned: true });

      const repinned = exported.map((c) => ({
        ...c,
        pinned: c.seq === 2,
        pinNote: c.seq === 2 ? 'new' : null,
      }));
      expect(await imported('s', repinned)).toBe('imported');
      expect(await pinsOf(backend, 's')).toEqual([[2, 'new']]);
      expect(await backend.load('s', null)).toMatchObject({ seq: 3, pinned: false });
    });
  });

  describe.skipIf(!up)('prune by rule', () => {
    it('removes below the keepLast highest seqs, but never the head or a pinned one', async () => {
      const backend = fresh();
      await session(backend, 's', 6);
      await backend.rollback({ sessionId: 's', seq: 2, expectedHead: undefined, now: 7000 });
      await backend.pin({ sessionId: 's', seq: 4, note: null });
      expect(await backend.prune('s', { keepLast: 1, createdBefore: null })).toBe(3);
      expect(await seqsOf(backend, 's')).toEqual([2, 4, 6]);
      expect((await backend.session('s'))?.checkpoints).toBe(3);
    });

    it('removes what was created before a time, but never the head or a pinned one', async () => {
      const backend = fresh();
      await session(backend, 's', 6);
      await backend.pin({ sessionId: 's', seq: 2, note: null });
      // Created at 1000 … 6000: before 4000 are 1, 2 and 3, and 2 is pinned.
      expect(await backend.prune('s', { keepLast: null, createdBefore: 4000 })).toBe(2);
      expect(await seqsOf(backend, 's')).toEqual([2, 4, 5, 6]);
      // Created at the cutoff stays.
      expect(await backend.prune('s', { keepLast: null, createdBefore: 4000 })).toBe(0);
      // Everything is older than this: all but the head and the pinned one go.
      expect(await backend.prune('s', { keepLast: null, createdBefore: 10_000 })).toBe(2);
      expect(await seqsOf(backend, 's')).toEqual([2, 6]);
    });

    it('removes nothing by age for a cutoff before 1970 (olderThan longer than the epoch)', async () => {
      const backend = fresh();
      await session(backend, 's', 3);
      expect(await backend.prune('s', { keepLast: null, createdBefore: -1 })).toBe(0);
      expect(await backend.prune('s', { keepLast: null, createdBefore: -9_000_000_000_000 })).toBe(
        0,
      );
      expect(await seqsOf(backend, 's')).toEqual([1, 2, 3]);
    });

    it('removes only what both rules let go when both are given', async () => {
      const backend = fresh();
      await session(backend, 's', 8);
      // keepLast 3 lets 1-5 go; created before 3500 lets 1-3 go: 1-3 go.
      expect(await backend.prune('s', { keepLast: 3, createdBefore: 3500 })).toBe(3);
      expect(await seqsOf(backend, 's')).toEqual([4, 5, 6, 7, 8]);
      // keepLast 4 lets 4 go; created before 9000 lets all go: 4 goes.
      expect(await backend.prune('s', { keepLast: 4, createdBefore: 9000 })).toBe(1);
      expect(await seqsOf(backend, 's')).toEqual([5, 6, 7, 8]);
    });

    it('keeps what a checkpoint kept by its age needs, through one another', async () => {
      const backend = fresh();
      await write(backend, 's', 1000);
      await write(backend, 's', 2000);
      await write(backend, 's', 3000, { needs: [1] });
      // Seq 4 is made later than seq 5 (a clock that went back): its age keeps it, not its seq.
      await write(backend, 's', 9000, { needs: [3] });
      await write(backend, 's', 4000);
      await write(backend, 's', 5000);
      expect(await backend.prune('s', { keepLast: null, createdBefore: 5000 })).toBe(2);
      // 4 is young and needs 3, which needs 1; 2 and 5 go.
      expect(await seqsOf(backend, 's')).toEqual([1, 3, 4, 6]);
    });

    it('keeps what a pinned checkpoint needs', async () => {
      const backend = fresh();
      await write(backend, 's', 1000);
      await write(backend, 's', 2000, { needs: [1] });
      await write(backend, 's', 3000);
      await write(backend, 's', 4000);
      await backend.pin({ sessionId: 's', seq: 2, note: null });
      expect(await backend.prune('s', { keepLast: 1, createdBefore: null })).toBe(1);
      expect(await seqsOf(backend, 's')).toEqual([1, 2, 4]);
    });

    it('counts with dryRun and removes nothing', async () => {
      const backend = fresh();
      await session(backend, 's', 5);
      await backend.pin({ sessionId: 's', seq: 1, note: null });
      const exported = await backend.exportCheckpoints('s', { afterSeq: null, limit: 10 });
      const keys = (await keysOf(backend.client, backend.namespace)).sort();
      expect(await backend.prune('s', { keepLast: 2, createdBefore: null }, true)).toBe(2);
      expect(await backend.prune('s', { keepLast: null, createdBefore: 3000 }, true)).toBe(1);
      expect(await backend.exportCheckpoints('s', { afterSeq: null, limit: 10 })).toEqual(exported);
      expect((await backend.session('s'))?.checkpoints).toBe(5);
      expect((await keysOf(backend.client, backend.namespace)).sort()).toEqual(keys);
      expect(await backend.prune('nobody', { keepLast: 1, createdBefore: null }, true)).toBe(0);
    });
  });

  describe.skipIf(!up)('deleteIdle', () => {
    it('deletes a session written before the cutoff, with every key and catalog entry of it', async () => {
      const backend = fresh();
      await write(backend, 'idle', 1000, { idempotencyKey: 'k', transcript: '["t"]' });
      await write(backend, 'idle', 2000, { needs: [1] });
      await backend.pin({ sessionId: 'idle', seq: 1, note: null });
      await backend.unpin('idle', 1);
      await write(backend, 'busy', 5000);
      const before = await keysOf(backend.client, backend.namespace);
      expect(await backend.deleteIdle('idle', 3000, false)).toEqual({
        status: 'deleted',
        checkpoints: 2,
      });
      const hexId = sessionKeys(backend.namespace, 'idle').hexId;
      const after = await keysOf(backend.client, backend.namespace);
      expect(after.filter((k) => k.endsWith(`:${hexId}`))).toEqual([]);
      expect(before.filter((k) => k.endsWith(`:${hexId}`)).length).toBeGreaterThan(4);
      expect(await backend.session('idle')).toBeNull();
      expect(
        (await backend.sessions({ after: null, limit: 10, prefix: '' })).map((s) => s.sessionId),
      ).toEqual(['busy']);
      expect(
        (await backend.sessions({ after: null, limit: 10, prefix: 'i' })).map((s) => s.sessionId),
      ).toEqual([]);
      // The catalog slice and the index of ids hold the busy session alone.
      const k = sessionKeys(backend.namespace, 'idle');
      expect(await backend.client.zrange(k.catalog, '0', '-1')).not.toContainEqual(
        expect.stringContaining(hexId),
      );
      expect(await backend.client.zrange(k.ids, '0', '-1')).not.toContain(hexId);
      // Written again, it is a new session.
      expect(await write(backend, 'idle', 6000)).toBe(1);
    });

    it('keeps a session written at or after the cutoff, one that holds a pin, and one not stored', async () => {
      const backend = fresh();
      await session(backend, 'recent', 3);
      await session(backend, 'pinned', 2);
      await backend.pin({ sessionId: 'pinned', seq: 1, note: null });
      expect(await backend.deleteIdle('recent', 3000, false)).toEqual({ status: 'kept' });
      expect(await backend.deleteIdle('pinned', 10_000, false)).toEqual({ status: 'kept' });
      expect(await backend.deleteIdle('nobody', 10_000, false)).toEqual({ status: 'kept' });
      expect(await seqsOf(backend, 'recent')).toEqual([1, 2, 3]);
      expect(await seqsOf(backend, 'pinned')).toEqual([1, 2]);
      // Unpinned, it goes.
      await backend.unpin('pinned', 1);
      expect(await backend.deleteIdle('pinned', 10_000, false)).toEqual({
        status: 'deleted',
        checkpoints: 2,
      });
    });

    it('judges idleness by the last write: a rollback counts, a pin or a prune does not', async () => {
      const backend = fresh();
      await session(backend, 's', 3);
      await backend.rollback({ sessionId: 's', seq: 1, expectedHead: undefined, now: 8000 });
      expect(await backend.deleteIdle('s', 8000, true)).toEqual({ status: 'kept' });
      await backend.prune('s', { keepLast: 1, createdBefore: null });
      await backend.pin({ sessionId: 's', seq: 1, note: null });
      await backend.unpin('s', 1);
      // The head (1) and the newest (3) stayed.
      expect(await backend.deleteIdle('s', 8001, true)).toEqual({
        status: 'deleted',
        checkpoints: 2,
      });
    });

    it('with dryRun, says what it would do and writes nothing', async () => {
      const backend = fresh();
      await session(backend, 's', 4);
      const keys = (await keysOf(backend.client, backend.namespace)).sort();
      const catalog = await backend.client.zrange(
        sessionKeys(backend.namespace, 's').catalog,
        '0',
        '-1',
      );
      expect(await backend.deleteIdle('s', 10_000, true)).toEqual({
        status: 'deleted',
        checkpoints: 4,
      });
      expect((await keysOf(backend.client, backend.namespace)).sort()).toEqual(keys);
      expect(
        await backend.client.zrange(sessionKeys(backend.namespace, 's').catalog, '0', '-1'),
      ).toEqual(catalog);
      expect(await seqsOf(backend, 's')).toEqual([1, 2, 3, 4]);
    });

    it('never loses a checkpoint appended while it decides: the writer wins or writes anew', async () => {
      const backend = fresh();
      const writer = fresh(backend.namespace);
      for (let round = 0; round < 200; round++) {
        const id = `race-${round}`;
        await write(backend, id, 1000);
        const [appended, decided] = await Promise.all([
          write(writer, id, 5000 + round),
          backend.deleteIdle(id, 2000, false),
        ]);
        const head = await backend.load(id, null);
        // The acknowledged checkpoint is stored, whichever came first.
        expect(head?.data).toBe(JSON.stringify(5000 + round));
        expect(head?.seq).toBe(appended);
        // Deleted first: the append started a new session; else the append kept the old one.
        expect(appended).toBe(decided.status === 'deleted' ? 1 : 2);
      }
    }, 60_000);
  });

  describe.skipIf(!up)('deleteIdleBatch', () => {
    /** Call deleteIdleBatch until it says none is left; each call's sessions. */
    async function drain(backend: RedisBackend, idleBefore: number, limit: number) {
      const calls: number[] = [];
      let checkpoints = 0;
      for (;;) {
        const gone = await backend.deleteIdleBatch({ idleBefore, limit });
        checkpoints += gone.checkpoints;
        if (gone.sessions === 0) return { calls, checkpoints };
        calls.push(gone.sessions);
      }
    }

    const ids = async (backend: RedisBackend) =>
      (await backend.sessions({ after: null, limit: 1000, prefix: '' }))
        .map((s) => s.sessionId)
        .sort();

    it('deletes the idle sessions without pins, at most limit a call, oldest first', async () => {
      const backend = fresh();
      // 40 idle sessions of 1 to 3 checkpoints, written at 1000 + i; 5 recent; 5 idle and pinned.
      let idleCheckpoints = 0;
      for (let i = 0; i < 40; i++) {
        for (let c = 0; c <= i % 3; c++) await write(backend, `idle-${i}`, 1000 + i);
        idleCheckpoints += (i % 3) + 1;
      }
      for (let i = 0; i < 5; i++) {
        await write(backend, `recent-${i}`, 1000 + i);
        await write(backend, `recent-${i}`, 9000 + i);
        await write(backend, `pinned-${i}`, 500 + i);
        await backend.pin({ sessionId: `pinned-${i}`, seq: 1, note: null });
      }
      const first = 1 + 2 + 3 + 1 + 2 + 3 + 1;
      expect(await backend.deleteIdleBatch({ idleBefore: 5000, limit: 7 })).toEqual({
        sessions: 7,
        checkpoints: first,
      });
      // The oldest seven went.
      const left = await ids(backend);
      for (let i = 0; i < 40; i++) expect(left.includes(`idle-${i}`)).toBe(i >= 7);
      const { calls, checkpoints } = await drain(backend, 5000, 7);
      expect(calls).toEqual([7, 7, 7, 7, 5]);
      expect(checkpoints + first).toBe(idleCheckpoints);
      expect(await ids(backend)).toEqual(
        [0, 1, 2, 3, 4].flatMap((i) => [`pinned-${i}`, `recent-${i}`]).sort(),
      );
      // Nothing of the deleted sessions is left: no key, no catalog or index entry.
      const own = (await keysOf(backend.client, backend.namespace)).filter((key) =>
        key.includes(`:${sessionKeys(backend.namespace, 'idle-1').hexId.slice(0, 8)}`),
      );
      expect(own).toEqual([]);
      expect(
        (await backend.sessions({ after: null, limit: 100, prefix: 'idle' })).map(
          (s) => s.sessionId,
        ),
      ).toEqual([]);
    });

    it('deletes nothing for a cutoff at or before 1970 (idleFor longer than the epoch)', async () => {
      const backend = fresh();
      await write(backend, 'epoch', 0);
      await write(backend, 'later', 1000);
      for (const idleBefore of [0, -1, -9_000_000_000_000]) {
        expect(await backend.deleteIdleBatch({ idleBefore, limit: 10 })).toEqual({
          sessions: 0,
          checkpoints: 0,
        });
        expect(await backend.deleteIdle('epoch', idleBefore, false)).toEqual({ status: 'kept' });
      }
      expect(await ids(backend)).toEqual(['epoch', 'later']);
      expect(await backend.deleteIdleBatch({ idleBefore: 1, limit: 10 })).toEqual({
        sessions: 1,
        checkpoints: 1,
      });
    });

    it('never deletes more than limit, even below the number of shards', async () => {
      const backend = fresh();
      for (let i = 0; i < 20; i++) await write(backend, `s-${i}`, 1000 + i);
      expect((await drain(backend, 5000, 1)).calls).toEqual(Array(20).fill(1));
      for (let i = 0; i < 20; i++) await write(backend, `s-${i}`, 1000 + i);
      expect((await drain(backend, 5000, 3)).calls).toEqual([3, 3, 3, 3, 3, 3, 2]);
    });

    it('never deletes a session pinned while a batch decides', async () => {
      const backend = fresh();
      const pinner = fresh(backend.namespace);
      for (let round = 0; round < 20; round++) {
        const sessionIds = Array.from({ length: 20 }, (_, i) => `pin-${round}-${i}`);
        for (const id of sessionIds) await write(backend, id, 1000);
        const [pins] = await Promise.all([
          Promise.all(sessionIds.map((id) => pinner.pin({ sessionId: id, seq: 1, note: null }))),
          drain(backend, 2000, 5),
        ]);
        for (const [n, id] of sessionIds.entries()) {
          // Pinned first: the session stays, pinned. Deleted first: the pin found nothing.
          const stored = await backend.load(id, 1);
          if (pins[n]!.status === 'done') expect(stored).toMatchObject({ pinned: true });
          else expect(stored).toBeNull();
        }
      }
    }, 60_000);

    it('sweeps and pins a session written before pins existed', async () => {
      const backend = fresh();
      await session(backend, 'old', 2);
      // As the version before pins left it: no pin in the copy of the head, no pins hash.
      await backend.client.hdel(sessionKeys(backend.namespace, 'old').session, 'hpin');
      expect(await backend.load('old', null)).toMatchObject({ seq: 2, pinned: false });
      await backend.pin({ sessionId: 'old', seq: 2, note: 'head' });
      expect(await backend.load('old', null)).toMatchObject({ pinned: true, pinNote: 'head' });
      expect(await backend.deleteIdleBatch({ idleBefore: 5000, limit: 10 })).toEqual({
        sessions: 0,
        checkpoints: 0,
      });
      await backend.unpin('old', 2);
      expect(await backend.deleteIdleBatch({ idleBefore: 5000, limit: 10 })).toEqual({
        sessions: 1,
        checkpoints: 2,
      });
    });

    it('reads past idle sessions that hold pins to the ones that do not', async () => {
      const backend = fresh();
      for (let i = 0; i < 30; i++) {
        await write(backend, `pinned-${i}`, 1000 + i);
        await backend.pin({ sessionId: `pinned-${i}`, seq: 1, note: null });
      }
      for (let i = 0; i < 4; i++) await write(backend, `later-${i}`, 2000 + i);
      expect(await drain(backend, 5000, 2)).toEqual({ calls: [2, 2], checkpoints: 4 });
      expect((await ids(backend)).filter((id) => id.startsWith('later'))).toEqual([]);
      expect(await ids(backend)).toHaveLength(30);
    });

    it('never loses a checkpoint appended while a batch decides', async () => {
      const backend = fresh();
      const writer = fresh(backend.namespace);
      for (let round = 0; round < 20; round++) {
        const sessionIds = Array.from({ length: 20 }, (_, i) => `race-${round}-${i}`);
        for (const id of sessionIds) await write(backend, id, 1000);
        const [appended] = await Promise.all([
          Promise.all(sessionIds.map((id) => write(writer, id, 9000 + round))),
          drain(backend, 2000, 5),
        ]);
        for (const [n, id] of sessionIds.entries()) {
          const head = await backend.load(id, null);
          expect(head?.data).toBe(JSON.stringify(9000 + round));
          expect(head?.seq).toBe(appended[n]);
        }
      }
    }, 60_000);
  });
});
