/**
 * What the contract suite cannot see from outside a backend: that sweep uses a backend's
 * native batch when it has one, that the retention option never fails a checkpoint that was
 * written, and kvBackend's tombstones.
 */
import { MemoryBackend, memoryKv } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import type { CheckpointBackend } from '../src/adapter.js';
import { CheckpointStore, kvBackend, RETENTION_INTERVAL } from '../src/index.js';
import { around } from './support/around.js';

const DAY = 86_400_000;

async function importIdle(store: CheckpointStore, id: string, count: number) {
  await store.importSession({
    sessionId: id,
    head: count,
    forkedFrom: null,
    createdAt: new Date(1_000),
    updatedAt: new Date(2_000),
    checkpoints: Array.from({ length: count }, (_, i) => ({
      seq: i + 1,
      parent: i === 0 ? null : i,
      data: i + 1,
      metadata: {},
      transcript: [],
      createdAt: new Date(1_000),
    })),
  });
}

/** The memory backend with a deleteIdleBatch built from its own calls, counting each call. */
function batchingMemory() {
  const base = new MemoryBackend();
  const calls = { batch: 0, deleteIdle: 0 };
  const backend: CheckpointBackend = around(base, {
    deleteIdle: (id: string, idleBefore: number, dryRun: boolean) => {
      calls.deleteIdle++;
      return base.deleteIdle(id, idleBefore, dryRun);
    },
    async deleteIdleBatch({ idleBefore, limit }: { idleBefore: number; limit: number }) {
      calls.batch++;
      const out = { sessions: 0, checkpoints: 0 };
      const idle = await base.sessions({
        after: { updatedAt: idleBefore, sessionId: '' },
        limit: 1e9,
        prefix: '',
      });
      for (const { sessionId } of idle) {
        if (out.sessions === limit) break;
        const done = await base.deleteIdle(sessionId, idleBefore, false);
        if (done.status === 'deleted') {
          out.sessions++;
          out.checkpoints += done.checkpoints;
        }
      }
      return out;
    },
  });
  return { backend, calls };
}

describe('sweep on a backend with deleteIdleBatch', () => {
  it('deletes the idle sessions in native batches, then prunes the rest by walking', async () => {
    const { backend, calls } = batchingMemory();
    const store = new CheckpointStore(backend);
    for (let i = 0; i < 150; i++) await importIdle(store, `idle-${i}`, 2);
    await importIdle(store, 'pinned', 3);
    await store.pin('pinned', 1);
    for (let i = 1; i <= 4; i++) await store.checkpoint('active', i);
    const progress: number[] = [];
    const result = await store.sweep({
      idleFor: DAY,
      keepLast: 2,
      onProgress: (p) => progress.push(p.sessions),
    });
    expect(result).toEqual({ sessions: 150, checkpoints: 300 + 2 });
    // Two full batches and the empty one that says none is left; no session one at a time.
    expect(calls).toEqual({ batch: 3, deleteIdle: 0 });
    expect(progress.slice(0, 2)).toEqual([100, 150]);
    expect((await store.list('pinned')).items.map((c) => c.seq)).toEqual([3, 2, 1]);
    expect((await store.list('active')).items.map((c) => c.seq)).toEqual([4, 3]);
  });

  it('takes the portable path for a dry run, which the batch cannot do', async () => {
    const { backend, calls } = batchingMemory();
    const store = new CheckpointStore(backend);
    await importIdle(store, 'idle', 2);
    expect(await store.sweep({ idleFor: DAY, dryRun: true })).toEqual({
      sessions: 1,
      checkpoints: 2,
    });
    expect(calls).toEqual({ batch: 0, deleteIdle: 1 });
    expect(await store.info('idle')).not.toBeNull();
  });
});

describe('sweep on a backend with pruneBatch', () => {
  /** The memory backend counting its prune and pruneBatch calls, or without pruneBatch. */
  function countingPrunes(batches: boolean) {
    const base = new MemoryBackend();
    const calls = { prune: 0, batch: [] as number[] };
    const backend = around(base, {
      prune: (...args: Parameters<CheckpointBackend['prune']>) => {
        calls.prune++;
        return base.prune(...args);
      },
      pruneBatch: batches
        ? (ids: readonly string[], ...rest: [never, boolean]) => {
            calls.batch.push(ids.length);
            return base.pruneBatch(ids, ...rest);
          }
        : undefined,
    });
    return { store: new CheckpointStore(backend), calls };
  }

  it('prunes each page of sessions in one pruneBatch call', async () => {
    const { store, calls } = countingPrunes(true);
    for (let i = 0; i < 250; i++) await importIdle(store, `s-${i}`, 3);
    expect(await store.sweep({ keepLast: 1 })).toEqual({ sessions: 0, checkpoints: 500 });
    expect(calls).toEqual({ prune: 0, batch: [100, 100, 50] });
    expect((await store.list('s-7')).items.map((c) => c.seq)).toEqual([3]);
  });

  it('prunes one session a call on a backend without it, to the same end', async () => {
    const { store, calls } = countingPrunes(false);
    for (let i = 0; i < 250; i++) await importIdle(store, `s-${i}`, 3);
    expect(await store.sweep({ keepLast: 1 })).toEqual({ sessions: 0, checkpoints: 500 });
    expect(calls).toEqual({ prune: 250, batch: [] });
  });

  it('batches only the sessions the portable idle walk kept', async () => {
    const { store, calls } = countingPrunes(true);
    await importIdle(store, 'idle', 3);
    for (let i = 1; i <= 3; i++) await store.checkpoint('active', i);
    expect(await store.sweep({ idleFor: DAY, keepLast: 1, dryRun: true })).toEqual({
      sessions: 1,
      checkpoints: 3 + 2,
    });
    expect(calls.batch).toEqual([1]);
    expect((await store.list('active')).items).toHaveLength(3);
  });
});

describe('a sweep stopped part way', () => {
  it('reports once more before it rejects, counting everything it removed', async () => {
    const base = new MemoryBackend();
    const controller = new AbortController();
    let prunes = 0;
    const backend = around(base, {
      pruneBatch: undefined,
      prune: async (...args: Parameters<CheckpointBackend['prune']>) => {
        // The signal comes while the 30th prune runs, part way through the first page.
        if (++prunes === 30) controller.abort(new Error('stopped'));
        return base.prune(...args);
      },
    });
    const store = new CheckpointStore(backend);
    for (let i = 0; i < 150; i++) await importIdle(store, `s-${i}`, 3);
    const reports: { walked: number; checkpoints: number }[] = [];
    await expect(
      store.sweep({ keepLast: 1, signal: controller.signal, onProgress: (p) => reports.push(p) }),
    ).rejects.toThrow('stopped');
    let left = 0;
    for (let i = 0; i < 150; i++) left += (await store.list(`s-${i}`)).items.length;
    expect(reports.at(-1)).toMatchObject({ walked: 30, checkpoints: 150 * 3 - left });
    expect(150 * 3 - left).toBe(60);
  });
});

describe('the retention option', () => {
  it('acknowledges a written checkpoint even when the prune after it fails', async () => {
    const base = new MemoryBackend();
    let prunes = 0;
    const backend: CheckpointBackend = around(base, {
      prune: async () => {
        prunes++;
        throw new Error('the server went away');
      },
    });
    const store = new CheckpointStore(backend, { retention: { keepLast: 1 } });
    for (let i = 1; i <= RETENTION_INTERVAL; i++) await store.checkpoint('s', i);
    expect(prunes).toBe(1);
    expect((await store.load('s'))?.data).toBe(RETENTION_INTERVAL);
  });

  it('names the store option whose rule has a misspelt name', () => {
    expect(
      () => new CheckpointStore(new MemoryBackend(), { retention: { keep: 3 } as never }),
    ).toThrow(
      `the store's option retention has no option "keep"; the options are keepLast and olderThan.`,
    );
  });

  it('prunes nothing between intervals', async () => {
    const base = new MemoryBackend();
    let prunes = 0;
    const backend: CheckpointBackend = around(base, {
      prune: (...args: Parameters<CheckpointBackend['prune']>) => {
        prunes++;
        return base.prune(...args);
      },
    });
    const store = new CheckpointStore(backend, { retention: { keepLast: 3 } });
    for (let i = 1; i <= RETENTION_INTERVAL * 3 - 1; i++) await store.checkpoint('s', i);
    expect(prunes).toBe(2);
  });
});

describe('kvBackend after a sweep', () => {
  it('leaves a tombstone that reads as no session, that a new write replaces, and that delete clears', async () => {
    const kv = memoryKv();
    const store = new CheckpointStore(kvBackend(kv));
    await importIdle(store, 'gone', 3);
    await importIdle(store, 'again', 2);
    expect(await store.sweep({ idleFor: DAY })).toEqual({ sessions: 2, checkpoints: 5 });
    expect(await kv.list!('ckpt:')).toEqual(['ckpt:s:again', 'ckpt:s:gone']);
    expect(await store.info('gone')).toBeNull();
    expect((await store.sessions()).items).toEqual([]);
    expect(await store.exportSession('gone')).toBeNull();

    const cp = await store.checkpoint('again', 'new', { expectedHead: null });
    expect(cp).toMatchObject({ seq: 1, parent: null });
    expect((await store.sessions()).items.map((s) => s.sessionId)).toEqual(['again']);
    await store.fork('again', { newId: 'gone' });
    expect((await store.load('gone'))?.data).toBe('new');
    expect(await store.delete('gone')).toBe(true);

    expect(await store.delete('again')).toBe(true);

    await importIdle(store, 'swept', 1);
    await store.sweep({ idleFor: DAY });
    expect(await kv.list!('ckpt:')).toEqual(['ckpt:s:swept']);
    expect(await store.delete('swept')).toBe(false);
    expect(await kv.list!('ckpt:')).toEqual([]);
  });
});
