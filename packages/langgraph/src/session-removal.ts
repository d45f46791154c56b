/**
 * Removing checkpoints of a thread's session with their pending writes: all of them
 * (`deleteThread`), or all but the newest and what those need (`prune`).
 */
import { type CheckpointStore, CkptError, type StateScope } from '@ckpt/core';
import { checkpointIds, listed } from './checkpoint-metadata.js';
import { markDeleted } from './deletion-marks.js';
import { stateKeys } from './names.js';

/** Delete the session, the pending writes of its checkpoints, and values set aside for it. */
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
  await Promise.all([
    ...ids.map((id) => state.delete(stateKeys.writes(sessionId, id))),
    state.delete(stateKeys.carried(sessionId)),
  ]);
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
 * writes of the removed ones. Where a checkpoint to keep was written before layout 2, what it
 * reads is unknown, so nothing is removed. Returns how many were removed, and the ids of those
 * kept.
 */
export async function pruneSession(
  store: CheckpointStore,
  state: StateScope,
  sessionId: string,
  keepLast: number,
): Promise<{ removed: number; kept: Set<string> }> {
  const all = await listed(store, sessionId);
  const before = all.flatMap(({ id }) => (id === undefined ? [] : [id]));
  const head = await store.head(sessionId);
  const roots = all.filter((cp, i) => i < keepLast || cp.seq === head);
  if (roots.some((cp) => !cp.needsKnown)) return { removed: 0, kept: new Set(before) };
  const removed = await store.prune(sessionId, { keepLast });
  const kept = new Set(removed === 0 ? before : await checkpointIds(store, sessionId));
  const gone = before.filter((id) => !kept.has(id));
  await Promise.all(gone.map((id) => state.delete(stateKeys.writes(sessionId, id))));
  return { removed, kept };
}
