/**
 * Many calls made at once, some of which must be refused: where a backend commits calls that
 * wait together (one transaction for a group, each call in a savepoint of its own), each must
 * still get its own outcome, and nothing of a refused call may be stored.
 */
import { type CheckpointStore, isCkptError } from '@ckpt/core';
import { expect } from 'vitest';

/** The largest payload the store given to `expectOwnOutcomesForCallsAtOnce` must take. */
export const CALLS_AT_ONCE_MAX_PAYLOAD = 10_000;

const outcome = (call: Promise<unknown>) =>
  call.then(
    () => 'ok',
    (err: unknown) => (isCkptError(err) ? err.code : `not a CkptError: ${String(err)}`),
  );

/**
 * Make `rounds` × 8 calls at once on `store` (whose `maxPayloadBytes` must be
 * CALLS_AT_ONCE_MAX_PAYLOAD), each on a session of its own: fresh checkpoints, checkpoints
 * against the right head, a stale `expectedHead`, a payload too large, a rollback to a missing
 * seq, a fork of a missing session, an idempotent replay. Expect each its own outcome, and the
 * refused ones to have stored nothing.
 */
export async function expectOwnOutcomesForCallsAtOnce(
  store: CheckpointStore,
  rounds = 6,
): Promise<void> {
  const ids = Array.from({ length: rounds }, (_, r) => r);
  for (const r of ids) {
    await store.checkpoint(`stale-${r}`, 1);
    await store.checkpoint(`stale-${r}`, 2);
    await store.checkpoint(`expected-${r}`, 1);
    await store.checkpoint(`seeded-${r}`, 1);
    await store.checkpoint(`replay-${r}`, 'first', { idempotencyKey: 'k' });
  }
  const big = 'x'.repeat(CALLS_AT_ONCE_MAX_PAYLOAD * 2);
  const calls = ids.flatMap((r) => [
    outcome(store.checkpoint(`fresh-${r}`, { r })),
    outcome(store.checkpoint(`stale-${r}`, 'late', { expectedHead: 1 })),
    outcome(store.checkpoint(`big-${r}`, big)),
    outcome(store.checkpoint(`expected-${r}`, { r }, { expectedHead: 1 })),
    outcome(store.rollback(`seeded-${r}`, 99)),
    outcome(store.checkpoint(`replay-${r}`, 'second', { idempotencyKey: 'k' })),
    outcome(store.fork(`nobody-${r}`, { newId: `copy-${r}` })),
    outcome(store.checkpoint(`new-${r}`, { r }, { expectedHead: null })),
  ]);
  const expected = ids.flatMap(() => [
    'ok',
    'CONFLICT',
    'PAYLOAD_TOO_LARGE',
    'ok',
    'NOT_FOUND',
    'ok',
    'NOT_FOUND',
    'ok',
  ]);
  expect(await Promise.all(calls)).toEqual(expected);

  for (const r of ids) {
    expect((await store.load(`fresh-${r}`))?.data).toEqual({ r });
    expect(await store.info(`stale-${r}`)).toMatchObject({ head: 2, checkpoints: 2 });
    expect((await store.load(`stale-${r}`))?.data).toBe(2);
    expect(await store.info(`big-${r}`)).toBeNull();
    expect(await store.info(`expected-${r}`)).toMatchObject({ head: 2, checkpoints: 2 });
    expect(await store.info(`seeded-${r}`)).toMatchObject({ head: 1, checkpoints: 1 });
    expect(await store.info(`replay-${r}`)).toMatchObject({ head: 1, checkpoints: 1 });
    expect((await store.load(`replay-${r}`))?.data).toBe('first');
    expect(await store.info(`copy-${r}`)).toBeNull();
    expect((await store.load(`new-${r}`))?.data).toEqual({ r });
  }
}
