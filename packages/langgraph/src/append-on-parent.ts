/**
 * Appending a LangGraph checkpoint after its own parent. ckpt appends on a session's head;
 * LangGraph branches from any checkpoint (time travel, `updateState` on an earlier one). So
 * that the session's timeline, and with it the transcript, follows LangGraph's branch, a put
 * whose parent is not the head first moves the head back to the parent.
 */
import {
  type CheckpointOptions,
  type CheckpointStore,
  type Checkpoint as CkptCheckpoint,
  isCkptError,
  type JsonValue,
} from '@ckpt/core';

/**
 * How many times a put tries to land on its parent while other writers move the head, before
 * it lands on whatever the head is, as a put without a stored parent does: a checkpoint is
 * never refused for where the head went.
 */
const PARENT_ATTEMPTS = 8;

/** The head a CONFLICT on `expectedHead` reports, or undefined for any other error. */
function headOfConflict(err: unknown): { head: number | null } | undefined {
  if (!isCkptError(err, 'CONFLICT') || err.details.argument !== 'expectedHead') return undefined;
  const head = err.details.actualHead;
  return { head: typeof head === 'number' ? head : null };
}

const pause = (attempt: number) =>
  new Promise((resolve) => setTimeout(resolve, Math.random() * 2 ** attempt));

/**
 * Append `data` to `sessionId` as the child of the checkpoint at `parentSeq`: in one write
 * when that is the head, else after a rollback to it. Without a parent (a new thread, or a
 * parent no longer stored) it goes on the head. A retried put (the same idempotency key)
 * returns the first one's checkpoint before anything moves.
 */
export async function appendOnParent(
  store: CheckpointStore,
  sessionId: string,
  data: JsonValue,
  options: CheckpointOptions,
  parentSeq: number | null,
): Promise<CkptCheckpoint> {
  if (parentSeq === null) return store.checkpoint(sessionId, data, options);
  // The head this call moved away from, to move it back if the append then fails.
  let movedFrom: number | undefined;
  for (let attempt = 1; ; attempt++) {
    try {
      return await store.checkpoint(sessionId, data, { ...options, expectedHead: parentSeq });
    } catch (err) {
      const conflict = headOfConflict(err);
      if (conflict === undefined) {
        if (movedFrom !== undefined) {
          await store.rollback(sessionId, movedFrom, { expectedHead: parentSeq }).catch(() => {});
        }
        throw err;
      }
      // The session is gone (deleted meanwhile), or others keep moving its head.
      if (conflict.head === null || attempt >= PARENT_ATTEMPTS) {
        return store.checkpoint(sessionId, data, options);
      }
      try {
        await store.rollback(sessionId, parentSeq, { expectedHead: conflict.head });
        movedFrom = conflict.head;
      } catch (rollbackErr) {
        // The parent was pruned or deleted since it was read: go on the head.
        if (isCkptError(rollbackErr, 'NOT_FOUND'))
          return store.checkpoint(sessionId, data, options);
        if (headOfConflict(rollbackErr) === undefined) throw rollbackErr;
      }
      if (attempt > 1) await pause(attempt);
    }
  }
}
