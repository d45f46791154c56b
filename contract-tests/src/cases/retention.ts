/**
 * Retention: pins, prune by age, sweep and the `retention` store option. Time is set without
 * waiting: sessions made "long ago" are imported with the times they carry (an import writes
 * updatedAt and each createdAt as given), and everything else is written now, so a case that
 * needs an idle session or an old checkpoint never sleeps.
 */
import {
  type BackendCapabilities,
  type CheckpointStore,
  RETENTION_INTERVAL,
  type SweepProgress,
} from '@ckpt/core';
import { describe, expect, it } from 'vitest';
import { itIf, itWith } from '../gate.js';
import type { ContractContext } from '../harness.js';
import { sessionReads, storeReads } from '../session-reads.js';
import {
  allPages,
  allSettledOrThrow,
  checkpointToImport,
  expectCkptError,
  sessionToImport,
} from '../util.js';

const MINUTE = 60_000;
const DAY = 86_400_000;

/** A session last written in 1970: `count` checkpoints, each created `seq` seconds after 0. */
async function importIdle(store: CheckpointStore, id: string, count = 3): Promise<void> {
  const checkpoints = Array.from({ length: count }, (_, i) => checkpointToImport(i + 1));
  expect(await store.importSession(sessionToImport(id, checkpoints))).toBe('imported');
}

/** `count` checkpoints written now, data 1..count. */
async function writeNow(store: CheckpointStore, id: string, count: number): Promise<void> {
  for (let i = 1; i <= count; i++) await store.checkpoint(id, i);
}

/** The stored seqs of a session, descending. */
async function seqs(store: CheckpointStore, id: string): Promise<number[]> {
  return (await allPages((p) => store.list(id, p), 100)).map((c) => c.seq);
}

/** Durations every retention call refuses. */
const BAD_DURATIONS: unknown[] = [
  -1,
  1.5,
  Number.NaN,
  Number.POSITIVE_INFINITY,
  '30d',
  null,
  2 ** 60,
];

export function retentionCases(t: ContractContext, caps: BackendCapabilities): void {
  const withList = itWith(caps, 'listSessions');
  const withoutList = itIf(!caps.listSessions, 'the backend declares listSessions');

  describe('pin and unpin', () => {
    it('marks a checkpoint pinned, with its note, in list(); unpin clears it', async () => {
      await writeNow(t.store, 's', 3);
      await t.store.pin('s', 2, { note: 'the approved draft' });
      await t.store.pin('s', 3);
      const list = (await t.store.list('s')).items;
      expect(list.map((c) => [c.seq, c.pinned, c.pinNote])).toEqual([
        [3, true, null],
        [2, true, 'the approved draft'],
        [1, false, null],
      ]);
      expect(await t.store.unpin('s', 2)).toBe(true);
      expect(await t.store.unpin('s', 2)).toBe(false);
      expect(await t.store.unpin('s', 1)).toBe(false);
      expect(await t.store.unpin('s', 99)).toBe(false);
      expect(await t.store.unpin('nobody', 1)).toBe(false);
      expect((await t.store.list('s')).items.map((c) => c.pinned)).toEqual([true, false, false]);
    });

    it('replaces the note when a pinned checkpoint is pinned again', async () => {
      await writeNow(t.store, 's', 1);
      await t.store.pin('s', 1, { note: 'first' });
      await t.store.pin('s', 1, { note: 'second' });
      expect((await t.store.list('s')).items[0]).toMatchObject({ pinned: true, pinNote: 'second' });
      await t.store.pin('s', 1);
      expect((await t.store.list('s')).items[0]).toMatchObject({ pinned: true, pinNote: null });
    });

    it('refuses an unknown session or seq with NOT_FOUND, pinning nothing', async () => {
      await writeNow(t.store, 's', 2);
      await expectCkptError(t.store.pin('nobody', 1), 'NOT_FOUND');
      await expectCkptError(t.store.pin('s', 3), 'NOT_FOUND');
      expect(await t.store.info('nobody')).toBeNull();
      expect((await t.store.list('s')).items.every((c) => !c.pinned)).toBe(true);
    });

    it('refuses bad arguments with INVALID_ARGUMENT, pinning nothing', async () => {
      await writeNow(t.store, 's', 1);
      for (const seq of [0, -1, 1.5, '1', null]) {
        await expectCkptError(t.store.pin('s', seq as number), 'INVALID_ARGUMENT');
        await expectCkptError(t.store.unpin('s', seq as number), 'INVALID_ARGUMENT');
      }
      for (const note of ['', 'a\0b', 'x'.repeat(256), 42, null]) {
        await expectCkptError(t.store.pin('s', 1, { note: note as string }), 'INVALID_ARGUMENT');
      }
      await expectCkptError(t.store.pin('s', 1, { notes: 'x' } as never), 'INVALID_ARGUMENT');
      await expectCkptError(t.store.pin('', 1), 'INVALID_ARGUMENT');
      expect((await t.store.list('s')).items[0]?.pinned).toBe(false);
    });

    it('changes no updatedAt, head or data', async () => {
      await importIdle(t.store, 's', 3);
      const before = await sessionReads(t.store, 's');
      await t.store.pin('s', 1, { note: 'n' });
      await t.store.unpin('s', 1);
      expect(await sessionReads(t.store, 's')).toEqual(before);
    });

    it('keeps a pinned checkpoint, and what it needs, through prune', async () => {
      await t.store.checkpoint('s', 1);
      await t.store.checkpoint('s', 2);
      await t.store.checkpoint('s', 3, { needs: [1] });
      await writeNow(t.store, 's', 3);
      await t.store.pin('s', 3);
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(3);
      expect(await seqs(t.store, 's')).toEqual([6, 3, 1]);
      expect((await t.store.load('s', 3))?.data).toBe(3);
      expect(await t.store.unpin('s', 3)).toBe(true);
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(2);
      expect(await seqs(t.store, 's')).toEqual([6]);
    });

    it('copies no pins into a fork; the source keeps its own', async () => {
      await writeNow(t.store, 's', 3);
      await t.store.pin('s', 2, { note: 'keep' });
      await t.store.fork('s', { atSeq: 3, newId: 'f' });
      expect((await t.store.list('f')).items.map((c) => [c.pinned, c.pinNote])).toEqual([
        [false, null],
        [false, null],
        [false, null],
      ]);
      expect(await t.store.prune('f', { keepLast: 1 })).toBe(2);
      expect((await t.store.list('s')).items[1]).toMatchObject({ pinned: true, pinNote: 'keep' });
    });

    it('carries pins and their notes through export and import', async () => {
      await writeNow(t.store, 's', 3);
      await t.store.pin('s', 1, { note: 'origin' });
      await t.store.pin('s', 3);
      const exported = await t.store.exportSession('s');
      const checkpoints = [];
      for await (const cp of exported!.checkpoints) checkpoints.push(cp);
      expect(checkpoints.map((cp) => [cp.seq, cp.pinned, cp.pinNote])).toEqual([
        [1, true, 'origin'],
        [2, undefined, undefined],
        [3, true, undefined],
      ]);
      await t.store.importSession({ ...exported!, sessionId: 'copy', checkpoints });
      const listed = async (id: string) =>
        (await t.store.list(id)).items.map(({ sessionId: _, ...info }) => info);
      expect(await listed('copy')).toEqual(await listed('s'));
    });

    it('refuses an imported pinNote without a pin, and a pinned that is not a boolean', async () => {
      const bad = [
        checkpointToImport(1, { pinNote: 'orphan' }),
        checkpointToImport(1, { pinned: 'yes' as never }),
        checkpointToImport(1, { pinned: true, pinNote: '' }),
      ];
      for (const cp of bad) {
        await expectCkptError(
          t.store.importSession(sessionToImport('s', [cp])),
          'INVALID_ARGUMENT',
        );
      }
      expect(await t.store.info('s')).toBeNull();
    });

    it('lets delete remove a session that holds pins', async () => {
      await writeNow(t.store, 's', 2);
      await t.store.pin('s', 1);
      expect(await t.store.delete('s')).toBe(true);
      expect(await t.store.info('s')).toBeNull();
    });
  });

  describe('prune by age', () => {
    /** Checkpoints 1..old created in 1970, then `recent` more written now. */
    async function oldThenRecent(old: number, recent: number) {
      await importIdle(t.store, 's', old);
      await writeNow(t.store, 's', recent);
    }

    it('removes the checkpoints created more than olderThan ago, keeping the head', async () => {
      await oldThenRecent(4, 2);
      expect(await t.store.prune('s', { olderThan: MINUTE })).toBe(4);
      expect(await seqs(t.store, 's')).toEqual([6, 5]);
      await importIdle(t.store, 'h', 4);
      await t.store.rollback('h', 2);
      expect(await t.store.prune('h', { olderThan: MINUTE })).toBe(3);
      expect(await seqs(t.store, 'h')).toEqual([2]);
    });

    it('with keepLast too, removes a checkpoint only when both let it go', async () => {
      await oldThenRecent(6, 2);
      // keepLast alone would keep only 8; the age keeps 7 as well.
      expect(await t.store.prune('s', { keepLast: 1, olderThan: MINUTE })).toBe(6);
      expect(await seqs(t.store, 's')).toEqual([8, 7]);
    });

    it('with keepLast too, keeps the newest even when they are old', async () => {
      await oldThenRecent(6, 0);
      expect(await t.store.prune('s', { keepLast: 4, olderThan: MINUTE })).toBe(2);
      expect(await seqs(t.store, 's')).toEqual([6, 5, 4, 3]);
    });

    it('keeps pinned checkpoints however old', async () => {
      await oldThenRecent(4, 1);
      await t.store.pin('s', 2);
      expect(await t.store.prune('s', { olderThan: MINUTE })).toBe(3);
      expect(await seqs(t.store, 's')).toEqual([5, 2]);
    });

    it('changes no updatedAt', async () => {
      await importIdle(t.store, 's', 5);
      const before = (await t.store.info('s'))?.updatedAt;
      expect(await t.store.prune('s', { keepLast: 1 })).toBe(4);
      expect((await t.store.info('s'))?.updatedAt).toEqual(before);
    });

    it('refuses bad arguments with INVALID_ARGUMENT, removing nothing', async () => {
      await oldThenRecent(3, 1);
      await expectCkptError(t.store.prune('s', {}), 'INVALID_ARGUMENT');
      for (const bad of BAD_DURATIONS) {
        await expectCkptError(t.store.prune('s', { olderThan: bad as number }), 'INVALID_ARGUMENT');
        await expectCkptError(
          t.store.prune('s', { keepLast: 1, olderThan: bad as number }),
          'INVALID_ARGUMENT',
        );
      }
      await expectCkptError(t.store.prune('s', { keepLast: 0, olderThan: 1 }), 'INVALID_ARGUMENT');
      expect(await seqs(t.store, 's')).toEqual([4, 3, 2, 1]);
    });
  });

  describe('sweep', () => {
    withList('deletes idle sessions and prunes the others, saying what it removed', async () => {
      await importIdle(t.store, 'idle-a', 3);
      await importIdle(t.store, 'idle-b', 4);
      await writeNow(t.store, 'active', 5);
      const result = await t.store.sweep({ idleFor: DAY, keepLast: 2 });
      expect(result).toEqual({ sessions: 2, checkpoints: 3 + 4 + 3 });
      expect(await t.store.info('idle-a')).toBeNull();
      expect(await t.store.info('idle-b')).toBeNull();
      expect(await seqs(t.store, 'active')).toEqual([5, 4]);
      // Nothing is left to do.
      expect(await t.store.sweep({ idleFor: DAY, keepLast: 2 })).toEqual({
        sessions: 0,
        checkpoints: 0,
      });
    });

    withList('with idleFor alone, deletes idle sessions and prunes nothing', async () => {
      await importIdle(t.store, 'idle', 3);
      await writeNow(t.store, 'active', 5);
      expect(await t.store.sweep({ idleFor: DAY })).toEqual({ sessions: 1, checkpoints: 3 });
      expect(await seqs(t.store, 'active')).toEqual([5, 4, 3, 2, 1]);
    });

    withList('without idleFor, deletes no session, however idle', async () => {
      await importIdle(t.store, 'idle', 3);
      expect(await t.store.sweep({ keepLast: 1 })).toEqual({ sessions: 0, checkpoints: 2 });
      expect(await seqs(t.store, 'idle')).toEqual([3]);
      expect(await t.store.sweep({ olderThan: MINUTE })).toEqual({ sessions: 0, checkpoints: 0 });
    });

    withList(
      'never deletes a session that holds a pin, and keeps the pin when pruning',
      async () => {
        await importIdle(t.store, 'pinned', 5);
        await importIdle(t.store, 'plain', 5);
        await t.store.pin('pinned', 2, { note: 'evidence' });
        expect(await t.store.sweep({ idleFor: DAY, keepLast: 1 })).toEqual({
          sessions: 1,
          checkpoints: 5 + 3,
        });
        expect(await t.store.info('plain')).toBeNull();
        expect(await seqs(t.store, 'pinned')).toEqual([5, 2]);
        // Unpinned, it is idle and goes.
        await t.store.unpin('pinned', 2);
        expect(await t.store.sweep({ idleFor: DAY })).toEqual({ sessions: 1, checkpoints: 2 });
      },
    );

    withList('leaves a session written within idleFor', async () => {
      await writeNow(t.store, 'recent', 2);
      expect(await t.store.sweep({ idleFor: DAY })).toEqual({ sessions: 0, checkpoints: 0 });
      expect(await t.store.info('recent')).not.toBeNull();
    });

    withList('prunes by olderThan and keepLast together across the store', async () => {
      await importIdle(t.store, 's', 6);
      await writeNow(t.store, 's', 2);
      await importIdle(t.store, 'other', 3);
      expect(await t.store.sweep({ keepLast: 1, olderThan: MINUTE })).toEqual({
        sessions: 0,
        checkpoints: 6 + 2,
      });
      expect(await seqs(t.store, 's')).toEqual([8, 7]);
      expect(await seqs(t.store, 'other')).toEqual([3]);
    });

    withList('with dryRun, counts what it would remove and writes nothing', async () => {
      await importIdle(t.store, 'idle', 3);
      await importIdle(t.store, 'pinned', 4);
      await t.store.pin('pinned', 1);
      await writeNow(t.store, 'active', 5);
      const before = await storeReads(t.store);
      const dry = await t.store.sweep({ idleFor: DAY, keepLast: 2, dryRun: true });
      expect(dry).toEqual({ sessions: 1, checkpoints: 3 + 1 + 3 });
      expect(await storeReads(t.store)).toEqual(before);
      expect(await t.store.sweep({ idleFor: DAY, keepLast: 2 })).toEqual(dry);
    });

    withList('reports progress, and a sweep stopped halfway finishes when run again', async () => {
      const count = 250;
      for (let i = 0; i < count; i++) await importIdle(t.store, `idle-${i}`, 2);
      await writeNow(t.store, 'active', 3);
      const controller = new AbortController();
      const seen: SweepProgress[] = [];
      const stopped = await t.store
        .sweep({
          idleFor: DAY,
          signal: controller.signal,
          onProgress: (p) => {
            seen.push(p);
            controller.abort(new Error('stop here'));
          },
        })
        .catch((err: unknown) => err);
      expect((stopped as Error).message).toBe('stop here');
      expect(seen).toHaveLength(1);
      expect(seen[0]!.sessions).toBeGreaterThan(0);
      expect(seen[0]!.sessions).toBeLessThan(count);
      expect(seen[0]!.checkpoints).toBe(seen[0]!.sessions * 2);
      const left = await allPages((p) => t.store.sessions(p), 100);
      expect(left.length).toBe(count + 1 - seen[0]!.sessions);

      const rest = await t.store.sweep({ idleFor: DAY });
      expect(rest).toEqual({
        sessions: count - seen[0]!.sessions,
        checkpoints: (count - seen[0]!.sessions) * 2,
      });
      expect((await allPages((p) => t.store.sessions(p), 100)).map((s) => s.sessionId)).toEqual([
        'active',
      ]);
    });

    withList('rejects at once with an aborted signal, removing nothing', async () => {
      await importIdle(t.store, 'idle', 2);
      const controller = new AbortController();
      controller.abort(new Error('not now'));
      const err = await t.store
        .sweep({ idleFor: DAY, signal: controller.signal })
        .catch((e: unknown) => e);
      expect((err as Error).message).toBe('not now');
      expect(await t.store.info('idle')).not.toBeNull();
    });

    // A sweep that reads a session's updatedAt and then deletes it, in two steps, deletes a
    // session whose checkpoint lands in between: acknowledged, then lost. Each round makes
    // sessions idle and writes to every one of them on other connections while a sweep runs;
    // every checkpoint acknowledged must then be stored.
    // The same with the prune of a sweep, which decides for a page of sessions at once: each
    // checkpoint written meanwhile is its session's newest, so keepLast 1 keeps it.
    for (const [what, options] of [
      ['idle sessions', { idleFor: DAY }],
      ['idle sessions and a prune', { idleFor: DAY, keepLast: 1 }],
    ] as const) {
      withList(
        `never deletes a checkpoint acknowledged while the sweep runs (${what})`,
        async () => {
          const [sweeper, ...writers] = [t.store, await t.connect(), await t.connect()];
          for (let round = 0; round < 15; round++) {
            const ids = Array.from({ length: 8 }, (_, i) => `r${round}-${i}`);
            for (const id of ids) await importIdle(sweeper, id, 2);
            const written: { id: string; seq: number; data: string }[] = [];
            const write = async (store: CheckpointStore, mine: string[]) => {
              for (const id of mine) {
                const data = `${id} after`;
                const cp = await store.checkpoint(id, data);
                written.push({ id, seq: cp.seq, data });
              }
            };
            await allSettledOrThrow<unknown>([
              sweeper.sweep(options),
              write(
                writers[0]!,
                ids.filter((_, i) => i % 2 === 0),
              ),
              write(
                writers[1]!,
                ids.filter((_, i) => i % 2 === 1),
              ),
            ]);
            for (const { id, seq, data } of written) {
              expect((await sweeper.load(id, seq))?.data, `${id} seq ${seq}`).toBe(data);
            }
          }
        },
      );
    }

    withList('refuses bad arguments with INVALID_ARGUMENT, removing nothing', async () => {
      await importIdle(t.store, 'idle', 3);
      const before = await storeReads(t.store);
      await expectCkptError(t.store.sweep({}), 'INVALID_ARGUMENT');
      await expectCkptError(t.store.sweep({ dryRun: true }), 'INVALID_ARGUMENT');
      await expectCkptError(t.store.sweep(undefined as never), 'INVALID_ARGUMENT');
      for (const bad of BAD_DURATIONS) {
        await expectCkptError(t.store.sweep({ idleFor: bad as number }), 'INVALID_ARGUMENT');
        await expectCkptError(
          t.store.sweep({ idleFor: DAY, olderThan: bad as number }),
          'INVALID_ARGUMENT',
        );
      }
      for (const keepLast of [0, -1, 1.5, '2']) {
        await expectCkptError(
          t.store.sweep({ idleFor: DAY, keepLast: keepLast as number }),
          'INVALID_ARGUMENT',
        );
      }
      const more = [
        { idleFor: DAY, dryRun: 'yes' },
        { idleFor: DAY, signal: 'stop' },
        { idleFor: DAY, onProgress: 'log' },
        { idle: DAY },
      ];
      for (const options of more) {
        await expectCkptError(t.store.sweep(options as never), 'INVALID_ARGUMENT');
      }
      expect(await storeReads(t.store)).toEqual(before);
    });

    withoutList('refuses with UNSUPPORTED on a backend that cannot list sessions', async () => {
      await importIdle(t.store, 'idle', 2);
      await expectCkptError(t.store.sweep({ keepLast: 1 }), 'UNSUPPORTED');
      expect(await seqs(t.store, 'idle')).toEqual([2, 1]);
    });
  });

  describe('the retention option', () => {
    it(`prunes a session by keepLast as it is written, once every ${RETENTION_INTERVAL} checkpoints`, async () => {
      const store = t.storeWith({ retention: { keepLast: 2 } });
      const total = RETENTION_INTERVAL * 2 + 3;
      for (let i = 1; i <= total; i++) {
        await store.checkpoint('s', i);
        const stored = (await store.info('s'))!.checkpoints;
        expect(stored).toBeLessThanOrEqual(2 + RETENTION_INTERVAL - 1);
      }
      // The last prune ran at seq 2 * RETENTION_INTERVAL, keeping 2; 3 came after it.
      expect(await seqs(store, 's')).toEqual([total, total - 1, total - 2, total - 3, total - 4]);
    });

    it('keeps pinned checkpoints and the head', async () => {
      const store = t.storeWith({ retention: { keepLast: 1 } });
      await store.checkpoint('s', 1);
      await store.pin('s', 1);
      for (let i = 2; i <= RETENTION_INTERVAL; i++) await store.checkpoint('s', i);
      expect(await seqs(store, 's')).toEqual([RETENTION_INTERVAL, 1]);
    });

    it('keeps what is younger than olderThan', async () => {
      const store = t.storeWith({ retention: { olderThan: DAY } });
      await importIdle(store, 's', 4);
      for (let i = 5; i <= RETENTION_INTERVAL; i++) await store.checkpoint('s', i);
      expect(await seqs(store, 's')).toEqual(
        Array.from({ length: RETENTION_INTERVAL - 4 }, (_, i) => RETENTION_INTERVAL - i),
      );
    });

    it('refuses a bad policy with INVALID_ARGUMENT', async () => {
      const bad: unknown[] = [
        {},
        { keepLast: 0 },
        { keepLast: 1.5 },
        ...BAD_DURATIONS.map((olderThan) => ({ olderThan })),
        { keep: 2 },
        'keepLast: 2',
      ];
      for (const retention of bad) {
        await expectCkptError(
          () => t.storeWith({ retention: retention as never }),
          'INVALID_ARGUMENT',
        );
      }
    });
  });
}
