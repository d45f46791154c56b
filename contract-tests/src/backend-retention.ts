/**
 * Retention at the backend contract (`backendRetentionCases`): what the retention role and the
 * prune rule promise, checked on one backend's own methods, beside other connections.
 */
import type { CheckpointBackend } from '@ckpt/core';
import { completeBackend } from '@ckpt/core/adapter';
import { afterAll, describe, expect, it } from 'vitest';

/** Append to `sessionId` at time `now`, with `needs`, and return the seq written. */
async function append(
  backend: CheckpointBackend,
  sessionId: string,
  now: number,
  options: { needs?: number[]; key?: string } = {},
): Promise<number> {
  const result = await backend.append({
    sessionId,
    data: JSON.stringify(`at ${now}`),
    metadata: '{}',
    transcript: '[]',
    expectedHead: undefined,
    idempotencyKey: options.key,
    now,
    needs: options.needs ?? [],
  });
  if (result.status !== 'written') throw new Error(`not written: ${result.status}`);
  return result.seq;
}

/** The seqs stored in `sessionId`, ascending. */
async function seqs(backend: CheckpointBackend, sessionId: string): Promise<number[]> {
  const rows = await completeBackend(backend).listCheckpoints(sessionId, {
    beforeSeq: null,
    limit: 1000,
  });
  return rows.map((row) => row.seq).reverse();
}

/** A session of checkpoints 1 to `n`, checkpoint i written at time i * 1000. */
async function sessionOf(backend: CheckpointBackend, sessionId: string, n: number) {
  for (let i = 1; i <= n; i++) await append(backend, sessionId, i * 1000);
}

/** A backend under test, for `backendRetentionCases`. */
export interface RetentionHarness {
  name: string;
  /** A backend in a namespace of its own; the cases destroy and close it. */
  open(): CheckpointBackend;
  /** Another backend on the same namespace as `backend` (another connection or pool). */
  connect(backend: CheckpointBackend): CheckpointBackend;
  /**
   * A backend on a namespace written by the schema before pins (the cases destroy and close
   * it), holding session 'old': checkpoints 1 (data `"one"`, created at 1000) and 2 (`"two"`,
   * created at 2000, the head), created at 1000 and updated at 2000, no keys, needs or
   * transcript.
   */
  openUpgraded?(): Promise<CheckpointBackend>;
}

/**
 * Retention at the backend contract, for the backends' own tests: pins on every read, prune by
 * rule, the atomic idle decisions (one session and a batch, beside writers and pinners on
 * another connection), fork and import, and an upgrade from the schema before pins.
 */
export function backendRetentionCases(under: RetentionHarness): void {
  describe(`retention at the backend: ${under.name}`, () => {
    /** What the cases opened: each closed after them, those of a namespace of their own destroyed. */
    const opened: { backend: CheckpointBackend; own: boolean }[] = [];
    const track = async (backend: CheckpointBackend, own = true) => {
      opened.push({ backend, own });
      await backend.ready?.();
      return backend;
    };
    const open = () => track(under.open());
    afterAll(async () => {
      for (const { backend, own } of opened.reverse()) {
        if (own) await backend.destroy?.();
        await backend.close();
      }
    });

    it('pins a checkpoint with a note, shows it on every read, and unpins it', async () => {
      const backend = await open();
      await sessionOf(backend, 's', 3);
      expect(await backend.pin({ sessionId: 's', seq: 2, note: 'keep me' })).toEqual({
        status: 'done',
      });
      await backend.pin({ sessionId: 's', seq: 3, note: null });
      expect(await backend.load('s', 2)).toMatchObject({ pinned: true, pinNote: 'keep me' });
      expect(await backend.load('s', null)).toMatchObject({ seq: 3, pinned: true, pinNote: null });
      expect(await backend.load('s', 1)).toMatchObject({ pinned: false, pinNote: null });
      const listed = await completeBackend(backend).listCheckpoints('s', {
        beforeSeq: null,
        limit: 10,
      });
      expect(listed.map((cp) => [cp.seq, cp.pinned, cp.pinNote])).toEqual([
        [3, true, null],
        [2, true, 'keep me'],
        [1, false, null],
      ]);
      const exported = await backend.exportCheckpoints('s', { afterSeq: null, limit: 10 });
      expect(exported.map((cp) => [cp.seq, cp.pinned, cp.pinNote])).toEqual([
        [1, false, null],
        [2, true, 'keep me'],
        [3, true, null],
      ]);
      // Pinning again replaces the note; the session's time stays.
      await backend.pin({ sessionId: 's', seq: 2, note: 'still' });
      expect(await backend.load('s', 2)).toMatchObject({ pinned: true, pinNote: 'still' });
      expect((await backend.session('s'))?.updatedAt).toBe(3000);
      expect(await backend.unpin('s', 2)).toBe(true);
      expect(await backend.unpin('s', 2)).toBe(false);
      expect(await backend.unpin('nobody', 1)).toBe(false);
      expect(await backend.load('s', 2)).toMatchObject({ pinned: false, pinNote: null });
      expect((await backend.session('s'))?.updatedAt).toBe(3000);
    });

    it('says what is missing when pinning what is not stored', async () => {
      const backend = await open();
      await sessionOf(backend, 's', 1);
      expect(await backend.pin({ sessionId: 'nobody', seq: 1, note: null })).toEqual({
        status: 'not_found',
        missing: 'session',
      });
      expect(await backend.pin({ sessionId: 's', seq: 9, note: null })).toEqual({
        status: 'not_found',
        missing: 'seq',
      });
    });

    it('shows the pin of a checkpoint replayed by its idempotency key', async () => {
      const backend = await open();
      await append(backend, 's', 1000, { key: 'k' });
      await backend.pin({ sessionId: 's', seq: 1, note: 'n' });
      const again = await backend.append({
        sessionId: 's',
        data: '"x"',
        metadata: '{}',
        transcript: '[]',
        expectedHead: undefined,
        idempotencyKey: 'k',
        now: 5000,
        needs: [],
      });
      expect(again).toMatchObject({
        status: 'replayed',
        checkpoint: { pinned: true, pinNote: 'n' },
      });
      expect(await backend.loadByKey('s', 'k')).toMatchObject({ pinned: true, pinNote: 'n' });
    });

    it('prunes by keepLast, by age, and by both, keeping the head and the pinned', async () => {
      const backend = await open();
      for (const id of ['last', 'age', 'both']) await sessionOf(backend, id, 6);
      await backend.pin({ sessionId: 'last', seq: 1, note: null });
      // keepLast 2: 2, 3 and 4 go (1 is pinned; 5 and 6 are the last two).
      expect(await backend.prune('last', { keepLast: 2, createdBefore: null })).toBe(3);
      expect(await seqs(backend, 'last')).toEqual([1, 5, 6]);
      // Created before 3500: 1, 2, 3 go.
      expect(await backend.prune('age', { keepLast: null, createdBefore: 3500 })).toBe(3);
      expect(await seqs(backend, 'age')).toEqual([4, 5, 6]);
      // Both: only what both let go, below the 4 highest and before 5500: 1 and 2.
      expect(await backend.prune('both', { keepLast: 4, createdBefore: 5500 })).toBe(2);
      expect(await seqs(backend, 'both')).toEqual([3, 4, 5, 6]);
      // The head stays whatever the rule says, after a rollback too.
      await backend.rollback({ sessionId: 'both', seq: 3, expectedHead: undefined, now: 7000 });
      expect(await backend.prune('both', { keepLast: 1, createdBefore: null })).toBe(2);
      expect(await seqs(backend, 'both')).toEqual([3, 6]);
      expect((await backend.session('both'))?.checkpoints).toBe(2);
      expect(await backend.prune('nobody', { keepLast: 1, createdBefore: null })).toBe(0);
    });

    it('counts without removing on a dry run, and never moves updatedAt', async () => {
      const backend = await open();
      await sessionOf(backend, 's', 5);
      expect(await backend.prune('s', { keepLast: 1, createdBefore: null }, true)).toBe(4);
      expect(await seqs(backend, 's')).toEqual([1, 2, 3, 4, 5]);
      expect(await backend.prune('s', { keepLast: 1, createdBefore: null })).toBe(4);
      expect(await backend.session('s')).toMatchObject({ updatedAt: 5000, checkpoints: 1 });
    });

    it('keeps what a pinned checkpoint needs, through one another', async () => {
      const backend = await open();
      await sessionOf(backend, 's', 2);
      await append(backend, 's', 3000, { needs: [1] });
      await append(backend, 's', 4000, { needs: [3] });
      for (let at = 5000; at <= 7000; at += 1000) await append(backend, 's', at);
      await backend.pin({ sessionId: 's', seq: 4, note: null });
      // Only 7 by the rule; 4 pinned, 3 needed by 4, 1 needed by 3.
      expect(await backend.prune('s', { keepLast: 1, createdBefore: null })).toBe(3);
      expect(await seqs(backend, 's')).toEqual([1, 3, 4, 7]);
      const exported = await backend.exportCheckpoints('s', { afterSeq: null, limit: 10 });
      expect(exported.map((cp) => [cp.seq, cp.needs])).toEqual([
        [1, []],
        [3, [1]],
        [4, [3]],
        [7, []],
      ]);
    });

    it('prunes many sessions in one batch as prune does each, where it has pruneBatch', async (context) => {
      const backend = await open();
      if (!backend.pruneBatch) return context.skip('the backend has no pruneBatch');
      await sessionOf(backend, 'plain', 5);
      await sessionOf(backend, 'pinned', 5);
      await backend.pin({ sessionId: 'pinned', seq: 2, note: null });
      await sessionOf(backend, 'needing', 3);
      await append(backend, 'needing', 4000, { needs: [1] });
      await sessionOf(backend, 'short', 1);
      const ids = ['plain', 'pinned', 'needing', 'short', 'nobody'];
      const rule = { keepLast: 1, createdBefore: null };
      // A dry run counts what each prune would remove, and removes nothing.
      expect(await backend.pruneBatch(ids, rule, true)).toBe(4 + 3 + 2);
      expect(await seqs(backend, 'plain')).toEqual([1, 2, 3, 4, 5]);
      expect(await backend.pruneBatch(ids, rule, false)).toBe(4 + 3 + 2);
      expect(await seqs(backend, 'plain')).toEqual([5]);
      expect(await seqs(backend, 'pinned')).toEqual([2, 5]);
      expect(await seqs(backend, 'needing')).toEqual([1, 4]);
      expect(await seqs(backend, 'short')).toEqual([1]);
      expect(await backend.session('nobody')).toBeNull();
      expect(await backend.session('plain')).toMatchObject({ updatedAt: 5000, checkpoints: 1 });
      expect(await backend.pruneBatch([], rule, false)).toBe(0);
    });

    it('keeps every checkpoint a writer acknowledges beside a batch prune', async (context) => {
      const backend = await open();
      if (!backend.pruneBatch) return context.skip('the backend has no pruneBatch');
      const other = await track(under.connect(backend), false);
      for (let round = 0; round < 20; round++) {
        const ids = Array.from({ length: 8 }, (_, i) => `prune-${round}-${i}`);
        for (const id of ids) await sessionOf(backend, id, 3);
        const [, ...written] = await Promise.all([
          backend.pruneBatch(ids, { keepLast: 1, createdBefore: null }, false),
          ...ids.map((id) => append(other, id, 9000)),
        ]);
        // Each new head stays, with its parent's checkpoint or without it, never half-removed.
        for (const [i, id] of ids.entries()) {
          const seq = written[i]!;
          expect(await backend.load(id, seq)).toMatchObject({ seq });
          const stored = await seqs(backend, id);
          expect(stored.at(-1)).toBe(seq);
          expect((await backend.session(id))?.checkpoints).toBe(stored.length);
        }
      }
    });

    it('deletes an idle session only when written before the cutoff and unpinned', async () => {
      const backend = await open();
      await sessionOf(backend, 'idle', 3);
      await sessionOf(backend, 'busy', 3);
      await append(backend, 'busy', 9000);
      await sessionOf(backend, 'pinned', 2);
      await backend.pin({ sessionId: 'pinned', seq: 1, note: null });
      expect(await backend.deleteIdle('idle', 5000, true)).toEqual({
        status: 'deleted',
        checkpoints: 3,
      });
      expect(await backend.session('idle')).not.toBeNull();
      expect(await backend.deleteIdle('busy', 5000, false)).toEqual({ status: 'kept' });
      expect(await backend.deleteIdle('pinned', 5000, false)).toEqual({ status: 'kept' });
      expect(await backend.deleteIdle('nobody', 5000, false)).toEqual({ status: 'kept' });
      expect(await backend.deleteIdle('idle', 3000, false)).toEqual({ status: 'kept' });
      expect(await backend.deleteIdle('idle', 5000, false)).toEqual({
        status: 'deleted',
        checkpoints: 3,
      });
      expect(await backend.session('idle')).toBeNull();
      expect(await backend.unpin('pinned', 1)).toBe(true);
      expect(await backend.deleteIdle('pinned', 5000, false)).toEqual({
        status: 'deleted',
        checkpoints: 2,
      });
    });

    it('deletes idle sessions in batches, oldest first, whole, until none is left', async () => {
      const backend = await open();
      for (let i = 0; i < 7; i++) {
        await append(backend, `idle-${i}`, 1000 + i, { key: `k${i}` });
        await append(backend, `idle-${i}`, 2000 + i, { needs: [1] });
      }
      await sessionOf(backend, 'pinned', 1);
      await backend.pin({ sessionId: 'pinned', seq: 1, note: null });
      await append(backend, 'recent', 9000);
      expect(await backend.deleteIdleBatch?.({ idleBefore: 5000, limit: 3 })).toEqual({
        sessions: 3,
        checkpoints: 6,
      });
      expect(await backend.session('idle-0')).toBeNull();
      expect(await backend.session('idle-3')).not.toBeNull();
      expect(await backend.deleteIdleBatch?.({ idleBefore: 5000, limit: 3 })).toEqual({
        sessions: 3,
        checkpoints: 6,
      });
      expect(await backend.deleteIdleBatch?.({ idleBefore: 5000, limit: 3 })).toEqual({
        sessions: 1,
        checkpoints: 2,
      });
      expect(await backend.deleteIdleBatch?.({ idleBefore: 5000, limit: 3 })).toEqual({
        sessions: 0,
        checkpoints: 0,
      });
      const left = await completeBackend(backend).sessions({ after: null, limit: 10, prefix: '' });
      expect(left.map((s) => s.sessionId).sort()).toEqual(['pinned', 'recent']);
      // Nothing of a deleted session stays: a new one by its id starts afresh, without its key.
      expect(await append(backend, 'idle-0', 9500)).toBe(1);
      expect(await backend.loadByKey('idle-0', 'k0')).toBeNull();
      const exported = await backend.exportCheckpoints('idle-0', { afterSeq: null, limit: 10 });
      expect(exported.map((cp) => [cp.seq, cp.needs])).toEqual([[1, []]]);
    });

    /**
     * Rounds of 8 idle sessions, each met at once by a batch sweep on one connection and by
     * `act` on another; then `check` of what `act` was told, session by session.
     */
    async function besideBatchSweep<T>(
      act: (other: CheckpointBackend, id: string) => Promise<T>,
      check: (backend: CheckpointBackend, id: string, told: T) => Promise<void>,
    ) {
      const backend = await open();
      const other = await track(under.connect(backend), false);
      for (let round = 0; round < 30; round++) {
        const ids = Array.from({ length: 8 }, (_, i) => `race-${round}-${i}`);
        for (const id of ids) await append(backend, id, 1000);
        const [, ...told] = await Promise.all([
          backend.deleteIdleBatch?.({ idleBefore: 5000, limit: 100 }),
          ...ids.map((id) => act(other, id)),
        ]);
        for (const [i, result] of told.entries()) await check(backend, ids[i]!, result);
      }
    }

    it('never deletes a session that a writer acknowledges beside a batch sweep', async () => {
      // Each write lands after the cutoff: the batch either deletes a session before it (and
      // the write starts it anew) or leaves it (written, so not idle).
      await besideBatchSweep(
        (writer, id) => append(writer, id, 9000),
        async (backend, id, seq) => {
          expect(await backend.session(id)).toMatchObject({ head: seq });
          expect(await backend.load(id, seq)).toMatchObject({ seq });
        },
      );
    });

    it('never deletes a session pinned beside a batch sweep', async () => {
      await besideBatchSweep(
        (pinner, id) => pinner.pin({ sessionId: id, seq: 1, note: null }),
        async (backend, id, pin) => {
          if (pin.status === 'done') {
            expect(await backend.load(id, 1)).toMatchObject({ pinned: true });
          }
        },
      );
    });

    it('forks without pins, and imports pins as exported', async () => {
      const backend = await open();
      await sessionOf(backend, 's', 3);
      await backend.pin({ sessionId: 's', seq: 2, note: 'why' });
      await completeBackend(backend).fork({ sessionId: 's', atSeq: null, newId: 'f', now: 4000 });
      const forked = await completeBackend(backend).listCheckpoints('f', {
        beforeSeq: null,
        limit: 10,
      });
      expect(forked.every((cp) => !cp.pinned)).toBe(true);
      expect(await backend.deleteIdle('f', 5000, false)).toEqual({
        status: 'deleted',
        checkpoints: 3,
      });
      const checkpoints = await backend.exportCheckpoints('s', { afterSeq: null, limit: 10 });
      const session = (await backend.session('s'))!;
      const input = {
        head: 3,
        forkedFrom: null,
        createdAt: session.createdAt,
        updatedAt: session.updatedAt,
        checkpoints,
      };
      expect(await backend.importSession({ ...input, sessionId: 'copy', replace: false })).toBe(
        'imported',
      );
      expect(await backend.load('copy', 2)).toMatchObject({ pinned: true, pinNote: 'why' });
      // The copy holds a pin, so no idle decision takes it; a replace keeps only what is given.
      expect(await backend.deleteIdle('copy', 5000, false)).toEqual({ status: 'kept' });
      const unpinned = checkpoints.map((cp) => ({ ...cp, pinned: false, pinNote: null }));
      await backend.importSession({
        ...input,
        checkpoints: unpinned,
        sessionId: 'copy',
        replace: true,
      });
      expect(await backend.load('copy', 2)).toMatchObject({ pinned: false });
      expect(await backend.deleteIdle('copy', 5000, false)).toMatchObject({ status: 'deleted' });
      expect(await backend.delete('s')).toBe(true);
      expect(await backend.unpin('s', 2)).toBe(false);
    });

    it.skipIf(!under.openUpgraded)(
      'upgrades a namespace from the schema before pins, its sessions unpinned and sweepable',
      async () => {
        const backend = await track(await under.openUpgraded!());
        expect(await backend.load('old', null)).toMatchObject({
          seq: 2,
          data: '"two"',
          pinned: false,
          pinNote: null,
        });
        expect(await backend.pin({ sessionId: 'old', seq: 1, note: 'first' })).toEqual({
          status: 'done',
        });
        expect(await backend.deleteIdleBatch?.({ idleBefore: 5000, limit: 10 })).toEqual({
          sessions: 0,
          checkpoints: 0,
        });
        expect(await backend.unpin('old', 1)).toBe(true);
        expect(await backend.deleteIdleBatch?.({ idleBefore: 5000, limit: 10 })).toEqual({
          sessions: 1,
          checkpoints: 2,
        });
      },
    );
  });
}
