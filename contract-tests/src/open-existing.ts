/**
 * Checks of an adapter's `create: false` for its own tests: a namespace that holds no store is
 * refused and nothing is written to it; one that holds a store opens. Each needs what only the
 * adapter's tests have: a way to open the backend, and a look at the storage that does not go
 * through it.
 */
import { type CheckpointBackend, CheckpointStore, isCkptError } from '@ckpt/core';
import { expect } from 'vitest';
import { expectCkptError } from './util.js';

/** How an adapter's test opens its backend, and sees what its storage holds. */
export interface ExistingStoreStorage {
  /** Open the backend (or kvBackend over the adapter's KV store) in `namespace`, as `create` says. */
  open(namespace: string, create: boolean): CheckpointBackend;
  /**
   * What the storage holds of `namespace`, read without the backend: the names of its files,
   * schemas, tables, functions or keys. Nothing may change it while a store is refused.
   */
  contents(namespace: string): Promise<string[]>;
}

/** What a refusal is shaped like, whatever the backend. */
const NOT_THERE =
  /^there is no ckpt store in .+ at .+ \(.+\); check .+, or open it without \{ create: false \} to create a new store there\.$/;

/**
 * Open `namespace`, which holds no store, with `create: false`: the factory refuses at once, or
 * `ready()` and every call fail with NOT_FOUND (saying where it looked and what to check), and
 * the storage holds of the namespace afterwards what it held before. Returns the error.
 */
export async function expectMissingStoreNotFound(
  storage: ExistingStoreStorage,
  namespace: string,
): Promise<Error & { code: string; details: Record<string, unknown> }> {
  const before = await storage.contents(namespace);
  let backend: CheckpointBackend;
  try {
    backend = storage.open(namespace, false);
  } catch (err) {
    expect(isCkptError(err, 'NOT_FOUND'), String(err)).toBe(true);
    expect((err as Error).message).toMatch(NOT_THERE);
    expect(await storage.contents(namespace)).toEqual(before);
    return err as Error & { code: string; details: Record<string, unknown> };
  }
  const store = new CheckpointStore(backend);
  const err = await expectCkptError(backend.ready ? backend.ready() : store.load('s'), 'NOT_FOUND');
  expect(err.message).toMatch(NOT_THERE);
  await expectCkptError(store.checkpoint('s', 1), 'NOT_FOUND');
  await expectCkptError(store.state('x').set('k', 1), 'NOT_FOUND');
  await store.close();
  expect(await storage.contents(namespace)).toEqual(before);
  return err;
}

/**
 * Write a store in `namespace` the usual way, then open it with `create: false`: it reads what
 * was written, and writes.
 */
export async function expectExistingStoreOpens(
  storage: ExistingStoreStorage,
  namespace: string,
): Promise<void> {
  const first = new CheckpointStore(storage.open(namespace, true));
  await first.checkpoint('s', { step: 1 });
  await first.state('x').set('k', 1);
  await first.close();
  const store = new CheckpointStore(storage.open(namespace, false));
  expect((await store.load('s'))?.data).toEqual({ step: 1 });
  expect(await store.state('x').get('k')).toBe(1);
  await store.checkpoint('s', { step: 2 });
  expect(await store.head('s')).toBe(2);
  await store.close();
}
