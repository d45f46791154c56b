/**
 * Removing checkpoints of a thread's session with their pending writes: all of them
 * (`deleteThread`), or all but the newest and what those need (`prune`).
 */
import { type CheckpointStore, CkptError, type StateScope } from '@ckpt/core';
import { checkpointIds } from './checkpoint-metadata.js';
import { markDeleted } from './deletion-marks.js';
import { stateKeys } from './names.js';

/** Delete the session and the pending writes of its checkpoints. */
export async function deleteSession(
  store: CheckpointStore,
  state: StateScope,
  sessionId: string,
): Promise<void> {
  const ids = await checkpointIds(store, sessionId);
  // Marked before the session goes: a putWrites that then finds no session learns from the
  // mark that its checkpoint was deleted (and removes its own), not yet to be written.
  if (ids.length > 0) {
    await state.update(stateKeys.deleted(sessionId), (current) => markDeleted(current, ids));
  }
  // The session before its writes: a putWrites that lands in between sees it gone.
  await store.delete(sessionId);
  await Promise.all(ids.map((id) => state.delete(stateKeys.writes(sessionId, id))));
}

/** `keepLast` as `prune` takes it: an integer of at least 1, or INVALID_ARGUMENT. */
export function checkKeepLast(keepLast: unknown): number {
  if (typeof keepLast !== 'number' || !Number.isSafeInteger(keepLast) || keepLast < 1) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `keepLast must be an integer of at least 1, got ${JSON.stringify(keepLast)}.`,
      { details: { argument: 'keepLast' } },
    );
  }
  return keepLast;
}

/**
 * Prune the session to its `keepLast` newest checkpoints, its head, and the checkpoints whose
 * values they read (the store keeps those: they are their needs), and delete the pending
 * writes of the removed ones. Returns how many were removed, and the ids of those kept.
 */
export async function pruneSession(
  store: CheckpointStore,
  state: StateScope,
  sessionId: string,
  keepLast: number,
): Promise<{ removed: number; kept: Set<string> }> {
  const before = await checkpointIds(store, sessionId);
  const removed = await store.prune(sessionId, { keepLast });
  const kept = new Set(removed === 0 ? before : await checkpointIds(store, sessionId));
  const gone = before.filter((id) => !kept.has(id));
  await Promise.all(gone.map((id) => state.delete(stateKeys.writes(sessionId, id))));
  return { removed, kept };
}
