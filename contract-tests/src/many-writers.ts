/**
 * Many writers on one session, each on a connection of its own: the check server backends
 * run at a larger scale than the contract suite's concurrency cases.
 */
import { type CheckpointBackend, CheckpointStore } from '@ckpt/core';
import { expect } from 'vitest';
import { yieldToEventLoop } from './util.js';

/**
 * Write `perWriter` checkpoints to one new session from every backend in `writers` at once,
 * and expect `writers.length * perWriter` distinct seqs, none lost, the head on the last.
 */
export async function expectDistinctSeqsFromManyWriters(
  writers: CheckpointBackend[],
  perWriter: number,
  sessionId = 'shared',
): Promise<void> {
  const written = await Promise.all(
    writers.map(async (backend, w) => {
      const store = new CheckpointStore(backend);
      const seqs: number[] = [];
      for (let i = 0; i < perWriter; i++) {
        seqs.push((await store.checkpoint(sessionId, { w, i })).seq);
        await yieldToEventLoop();
      }
      return seqs;
    }),
  );
  const total = writers.length * perWriter;
  const all = written.flat();
  expect(new Set(all).size).toBe(total);
  expect(Math.max(...all)).toBe(total);
  const store = new CheckpointStore(writers[0]!);
  expect(await store.info(sessionId)).toMatchObject({ head: total, checkpoints: total });
  for (const seq of [1, Math.ceil(total / 2), total])
    expect(await store.load(sessionId, seq)).not.toBeNull();
}
