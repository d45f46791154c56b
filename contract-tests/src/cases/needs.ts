/**
 * `needs`: checkpoints that refer to earlier ones, which prune keeps and fork copies as long as
 * a checkpoint kept (or copied) needs them; export, import and copy carry them.
 */
import type { BackendCapabilities, CheckpointStore, ExportedCheckpoint } from '@ckpt/core';
import { describe, expect, it } from 'vitest';
import { itWith } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { sessionReads } from '../session-reads.js';
import {
  allSettledOrThrow,
  checkpointToImport,
  expectCkptError,
  sessionToImport,
} from '../util.js';

/** Every checkpoint of `sessionId` as an export gives it, seq ascending. */
async function exported(store: CheckpointStore, sessionId: string): Promise<ExportedCheckpoint[]> {
  const session = await store.exportSession(sessionId);
  const out: ExportedCheckpoint[] = [];
  for await (const cp of session?.checkpoints ?? []) out.push(cp);
  return out;
}

/** seq -> the needs its export records (checkpoints without needs are left out). */
async function needsOf(
  store: CheckpointStore,
  sessionId: string,
): Promise<Record<number, number[]>> {
  const out: Record<number, number[]> = {};
  for (const cp of await exported(store, sessionId)) if (cp.needs?.length) out[cp.seq] = cp.needs;
  return out;
}

/** The stored seqs of `sessionId`, newest first. */
async function seqs(store: CheckpointStore, sessionId: string): Promise<number[]> {
  return (await store.list(sessionId, { limit: 1000 })).items.map((c) => c.seq);
}

/** Every need of every stored checkpoint is stored: what no removal may ever break. */
async function expectNothingMissing(store: CheckpointStore, sessionId: string): Promise<void> {
  const cps = await exported(store, sessionId);
  const stored = new Set(cps.map((cp) => cp.seq));
  for (const cp of cps) {
    for (const seq of cp.needs ?? []) {
      expect(stored.has(seq), `checkpoint ${cp.seq} needs ${seq}, which is gone`).toBe(true);
    }
  }
}

const BAD_NEEDS: [string, unknown, string][] = [
  ['a negative seq', [-1], 'needs[0]'],
  ['seq 0', [2, 0], 'needs[1]'],
  ['a fraction', [1.5], 'needs[0]'],
  ['NaN', [Number.NaN], 'needs[0]'],
  ['a seq above the safe integers', [2 ** 53], 'needs[0]'],
  ['a string seq', [1, 2, '3'], 'needs[2]'],
  ['null in the array', [null], 'needs[0]'],
  ['a number, not an array', 1, 'needs'],
  ['a string, not an array', '1,2', 'needs'],
  ['an object, not an array', { 0: 1 }, 'needs'],
  ['1,001 seqs', Array.from({ length: 1001 }, (_, i) => i + 1), 'needs'],
];

/** needs on checkpoint, prune, fork, export and import. */
export function needsCases(t: ContractContext, caps: BackendCapabilities): void {
  const itConcurrent = itWith(caps, 'concurrentWriters');

  describe('needs', () => {
    it('keeps a checkpoint that a kept checkpoint needs, and reads it whole', async () => {
      await t.store.checkpoint('s', { value: 'big' }, { metadata: { m: 1 }, transcript: ['one'] });
      for (let i = 2; i <= 5; i++) await t.store.checkpoint('s', i);
      await t.store.checkpoint('s', { ref: 1 }, { needs: [1] });
      const one = await t.store.load('s', 1);
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(4);
      expect(await seqs(t.store, 's')).toEqual([6, 1]);
      expect(await t.store.load('s', 1)).toEqual(one);
      expect((await t.store.info('s'))?.checkpoints).toBe(2);
      expect(await needsOf(t.store, 's')).toEqual({ 6: [1] });
      // The transcript follows parents, as before: 1 is not an ancestor of 6 any more.
      expect(await t.store.history('s')).toEqual([6]);
    });

    it('keeps what the needed checkpoints need in turn', async () => {
      await t.store.checkpoint('s', 1);
      await t.store.checkpoint('s', 2, { needs: [1] });
      await t.store.checkpoint('s', 3);
      await t.store.checkpoint('s', 4, { needs: [2] });
      await t.store.checkpoint('s', 5);
      await t.store.checkpoint('s', 6, { needs: [4] });
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(2);
      expect(await seqs(t.store, 's')).toEqual([6, 4, 2, 1]);
      for (const seq of [1, 2, 4, 6]) expect((await t.store.load('s', seq))?.data).toBe(seq);
      expect(await needsOf(t.store, 's')).toEqual({ 2: [1], 4: [2], 6: [4] });
    });

    it('keeps what the head needs when the head is behind the newest', async () => {
      for (let i = 1; i <= 3; i++) await t.store.checkpoint('s', i);
      await t.store.checkpoint('s', 4, { needs: [2] });
      await t.store.checkpoint('s', 5);
      await t.store.rollback('s', 4);
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(2);
      expect(await seqs(t.store, 's')).toEqual([5, 4, 2]);
    });

    it('releases what only a checkpoint pruned away needed', async () => {
      await t.store.checkpoint('s', 1);
      await t.store.checkpoint('s', 2, { needs: [1] });
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(0);
      await t.store.checkpoint('s', 3);
      await t.store.checkpoint('s', 4);
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(3);
      expect(await seqs(t.store, 's')).toEqual([4]);
      expect(await t.store.load('s', 1)).toBeNull();
      expect(await needsOf(t.store, 's')).toEqual({});
    });

    it('keeps a checkpoint two kept checkpoints need, once', async () => {
      await t.store.checkpoint('s', 1);
      await t.store.checkpoint('s', 2);
      await t.store.checkpoint('s', 3, { needs: [1] });
      await t.store.checkpoint('s', 4, { needs: [1, 3] });
      expect(await t.store.prune('s', { keepLast: 2 })).toBe(1);
      expect(await seqs(t.store, 's')).toEqual([4, 3, 1]);
      expect((await t.store.info('s'))?.checkpoints).toBe(3);
    });

    it('records needs ascending, each once, and returns the checkpoint as without them', async () => {
      for (let i = 1; i <= 3; i++) await t.store.checkpoint('s', i);
      const cp = await t.store.checkpoint('s', 'x', { needs: [3, 1, 3, 2, 1] });
      expect(cp).toEqual(await t.store.load('s', 4));
      expect(cp).not.toHaveProperty('needs');
      expect(await needsOf(t.store, 's')).toEqual({ 4: [1, 2, 3] });
    });

    it('leaves out needs that name no stored earlier checkpoint', async () => {
      await t.store.checkpoint('s', 1, { needs: [1, 5] });
      for (let i = 2; i <= 4; i++) await t.store.checkpoint('s', i);
      await t.store.prune('s', { keepLast: 2 });
      // 1 and 2 are gone, 5 is this checkpoint's own seq, 9 is not written yet.
      await t.store.checkpoint('s', 5, { needs: [1, 2, 3, 5, 9] });
      expect(await needsOf(t.store, 's')).toEqual({ 5: [3] });
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(1);
      expect(await seqs(t.store, 's')).toEqual([5, 3]);
    });

    it('takes an empty needs as no needs', async () => {
      await t.store.checkpoint('s', 1);
      await t.store.checkpoint('s', 2, { needs: [] });
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(1);
      expect(await needsOf(t.store, 's')).toEqual({});
    });

    it('takes 1,000 needs', async () => {
      await t.store.checkpoint('s', 0);
      const needs = Array.from({ length: 1000 }, (_, i) => i + 1);
      await t.store.checkpoint('s', 1, { needs });
      expect(await needsOf(t.store, 's')).toEqual({ 2: [1] });
    });

    describe('refuses bad needs with INVALID_ARGUMENT naming them, writing nothing', () => {
      for (const [what, needs, argument] of BAD_NEEDS) {
        it(`with ${what}`, async () => {
          await t.store.checkpoint('s', 1);
          const err = await expectCkptError(
            t.store.checkpoint('s', 2, { needs: needs as number[] }),
            'INVALID_ARGUMENT',
          );
          expect(err.details.argument).toBe(argument);
          expect(err.message).toContain(argument);
          expect(await t.store.info('s')).toMatchObject({ head: 1, checkpoints: 1 });
          await expectCkptError(
            t.store.checkpoint('new', 1, { needs: needs as number[] }),
            'INVALID_ARGUMENT',
          );
          expect(await t.store.info('new')).toBeNull();
        });
      }
    });

    it('forks with what the copied checkpoints need, though they are not ancestors', async () => {
      // 1 - 2 - 3, then a branch 1 - 4 where 4 needs 3, which needs 2.
      await t.store.checkpoint('s', 1);
      await t.store.checkpoint('s', 2);
      await t.store.checkpoint('s', 3, { needs: [2] });
      await t.store.rollback('s', 1);
      await t.store.checkpoint('s', 4, { needs: [3] });
      await t.store.checkpoint('s', 5);
      await t.store.fork('s', { atSeq: 4, newId: 'f' });
      expect(await t.store.history('f')).toEqual([1, 4]);
      expect(await seqs(t.store, 'f')).toEqual([4, 3, 2, 1]);
      expect((await t.store.info('f'))?.checkpoints).toBe(4);
      for (const seq of [2, 3]) {
        expect(await t.store.load('f', seq)).toEqual({
          ...(await t.store.load('s', seq)),
          sessionId: 'f',
        });
      }
      expect(await needsOf(t.store, 'f')).toEqual({ 3: [2], 4: [3] });
      // The copy keeps them as its own: prune there keeps them too.
      expect(await t.store.prune('f', { keepLast: 1 })).toBe(1);
      expect(await seqs(t.store, 'f')).toEqual([4, 3, 2]);
    });

    it('forks a pruned session so that the fork reads whole', async () => {
      await t.store.checkpoint('s', { value: 1 });
      for (let i = 2; i <= 4; i++) await t.store.checkpoint('s', i, { needs: [1] });
      await t.store.prune('s', { keepLast: 1 });
      expect(await seqs(t.store, 's')).toEqual([4, 1]);
      await t.store.fork('s', { newId: 'f' });
      expect(await seqs(t.store, 'f')).toEqual([4, 1]);
      expect((await t.store.load('f', 1))?.data).toEqual({ value: 1 });
      expect(await t.store.history('f')).toEqual([4]);
      await expectNothingMissing(t.store, 'f');
    });

    it('carries needs through export and import', async () => {
      await t.store.checkpoint('s', 1, { transcript: ['a'] });
      await t.store.checkpoint('s', 2, { needs: [1] });
      await t.store.checkpoint('s', 3);
      await t.store.checkpoint('s', 4, { needs: [1, 2] });
      const before = await sessionReads(t.store, 's');
      const all = await exported(t.store, 's');
      expect(all.map((cp) => cp.needs)).toEqual([undefined, [1], undefined, [1, 2]]);
      const session = await t.store.exportSession('s');
      await t.store.delete('s');
      expect(await t.store.importSession({ ...session!, checkpoints: all })).toBe('imported');
      expect(await sessionReads(t.store, 's')).toEqual(before);
      expect(await needsOf(t.store, 's')).toEqual({ 2: [1], 4: [1, 2] });
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(1);
      expect(await seqs(t.store, 's')).toEqual([4, 2, 1]);
    });

    it('imports checkpoints without needs, as older exports have them', async () => {
      const session = sessionToImport('old', [checkpointToImport(1), checkpointToImport(2)]);
      expect(await t.store.importSession(session)).toBe('imported');
      expect(await needsOf(t.store, 'old')).toEqual({});
      expect(await t.store.prune('old', { keepLast: 1 })).toBe(1);
    });

    it('imports only the needs that name an earlier checkpoint imported with it', async () => {
      // 1 is not in the session; 4 and 9 are not earlier than 3.
      const session = sessionToImport('imp', [
        checkpointToImport(2, { parent: null }),
        checkpointToImport(3, { needs: [1, 2, 4, 9, 2] }),
        checkpointToImport(4, { needs: [3] }),
      ]);
      expect(await t.store.importSession(session)).toBe('imported');
      expect(await needsOf(t.store, 'imp')).toEqual({ 3: [2], 4: [3] });
    });

    it.each([
      [[0], 'session.checkpoints[1].needs[0]'],
      ['1', 'session.checkpoints[1].needs'],
      [Array.from({ length: 1001 }, (_, i) => i + 1), 'session.checkpoints[1].needs'],
    ])('refuses an import with needs %j, naming them, writing nothing', async (needs, argument) => {
      const session = sessionToImport('bad', [
        checkpointToImport(1),
        checkpointToImport(2, { needs: needs as number[] }),
      ]);
      const err = await expectCkptError(t.store.importSession(session), 'INVALID_ARGUMENT');
      expect(err.details.argument).toBe(argument);
      expect(await t.store.info('bad')).toBeNull();
    });

    // A prune that decides what to keep from a read of the session, and then removes, loses
    // what a checkpoint appended in between needs: here checkpoint P_m needs the one that
    // P_(m-1) pushed out of the newest, so every step of the writer opens that window while
    // other connections prune as fast as they can. P_m stays among the newest to the end, so
    // a loss stays visible.
    itConcurrent(
      'never leaves a kept checkpoint without what it needs while prunes and checkpoints with needs race',
      async () => {
        const keepLast = 40;
        const [writer, ...pruners] = [t.store, await t.connect(), await t.connect()];
        for (let round = 0; round < 4; round++) {
          const id = `race-${round}`;
          for (let i = 1; i <= 2 * keepLast; i++) await writer.checkpoint(id, { x: i });
          let writing = true;
          const write = async () => {
            try {
              for (let m = 1; m <= keepLast; m++) {
                await writer.checkpoint(id, { p: m }, { needs: [keepLast + m - 1] });
              }
            } finally {
              writing = false;
            }
          };
          const prune = async (store: CheckpointStore) => {
            while (writing) await store.prune(id, { keepLast });
          };
          await allSettledOrThrow([write(), ...pruners.map(prune)]);
          await expectNothingMissing(t.store, id);
          await t.store.prune(id, { keepLast });
          await expectNothingMissing(t.store, id);
          const stored = await seqs(t.store, id);
          expect(stored.slice(0, keepLast)).toEqual(
            Array.from({ length: keepLast }, (_, i) => 3 * keepLast - i),
          );
        }
      },
    );
  });
}
