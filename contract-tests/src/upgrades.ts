/**
 * A check for a backend's schema upgrades: what an older schema wrote reads back whole, and
 * goes on, through the schema that replaces it.
 */
import { CheckpointStore, compress, type JsonValue, kvBackend } from '@ckpt/core';
import { expect } from 'vitest';
import { firstEvents } from './cases/watch.js';

/** The older schema's own calls, each writing through it directly. */
export interface OldSchemaCalls {
  /** Save data `String(at)` (JSON text) with metadata `{ at }` at time `at` on session 'old'. */
  append(at: number): Promise<unknown>;
  /** Move the head of 'old' to `seq`, at time `at`. */
  rollback(seq: number, at: number): Promise<unknown>;
  /** Fork 'old' at `seq` as session 'fork', at time `at`. */
  fork(seq: number, at: number): Promise<unknown>;
}

/**
 * Write two sessions through `old`, then open the current schema with `open()` (which upgrades
 * it) and check that every head reads back whole, parent, metadata and time included, that
 * the next checkpoint goes on from it, and that a checkpoint that needs one the old schema
 * wrote keeps it through a prune. Returns the store it opened, for the caller to close.
 */
export async function expectOldSessionsReadWhole(
  old: OldSchemaCalls,
  open: () => CheckpointStore,
): Promise<CheckpointStore> {
  for (const at of [10, 20, 30]) await old.append(at);
  // The head of 'old' is now 2, whose parent is 1 (not "the head minus one"); the head of
  // 'fork' is 3, whose parent is 2.
  await old.rollback(2, 40);
  await old.fork(3, 50);

  const store = open();
  expect(await store.load('old')).toEqual({
    sessionId: 'old',
    seq: 2,
    parent: 1,
    data: 20,
    metadata: { at: 20 },
    createdAt: new Date(20),
  });
  expect(await store.load('fork')).toEqual({ ...(await store.load('fork', 3)), parent: 2 });
  const next = await store.checkpoint('old', 'after the upgrade');
  expect({ seq: next.seq, parent: next.parent }).toEqual({ seq: 4, parent: 2 });
  expect(await store.load('old')).toEqual(next);
  expect(await store.history('old')).toEqual([1, 2, 4]);
  // Needs, which no older schema had, work on what it wrote.
  await store.checkpoint('old', 'needs the first', { needs: [1] });
  expect(await store.prune('old', { keepLast: 1 })).toBe(3);
  expect((await store.list('old')).items.map((c) => c.seq)).toEqual([5, 1]);
  expect((await store.load('old', 1))?.data).toBe(10);
  return store;
}

/** A plain and a compressed value, as a store of this version hands them to a backend. */
export async function plainAndCompressedValues(): Promise<{
  values: { plain: string; compressed: string };
  /** What each reads back as. */
  data: { plain: JsonValue; compressed: JsonValue };
}> {
  const held = new Map<string, string>();
  const kv = {
    get: async (key: string) => held.get(key),
    set: async (key: string, value: string) => void held.set(key, value),
    delete: async (key: string) => held.delete(key),
  };
  const encoder = new CheckpointStore(kvBackend(kv), { codecs: [compress('gzip')] });
  const data = {
    plain: { n: 1 },
    compressed: { text: 'a value long enough to compress. '.repeat(50) },
  };
  await encoder.checkpoint('compressed', data.compressed);
  const compressed = (await encoder.backend.load('compressed', null))!.data;
  await encoder.close();
  return { values: { plain: JSON.stringify(data.plain), compressed }, data };
}

/**
 * Sessions 'plain' and 'compressed' of one checkpoint each, which an older schema holds as
 * `plainAndCompressedValues()` made them, read through `store` (with `compress('gzip')`) after
 * its upgrade, and what is done to them then arrives at a watcher in order.
 */
export async function expectUpgradedValuesReadAndWatched(
  store: CheckpointStore,
  data: { plain: JsonValue; compressed: JsonValue },
): Promise<void> {
  expect((await store.load('plain'))?.data).toEqual(data.plain);
  expect((await store.load('compressed'))?.data).toEqual(data.compressed);
  const stream = store.watch();
  await stream.ready;
  await store.checkpoint('plain', { n: 2 });
  await store.rollback('plain', 1);
  await store.delete('compressed');
  expect((await firstEvents(stream, 3)).map((e) => [e.sessionId, e.kind, e.seq])).toEqual([
    ['plain', 'checkpoint', 2],
    ['plain', 'rollback', 1],
    ['compressed', 'delete', undefined],
  ]);
}
