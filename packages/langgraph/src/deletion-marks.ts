/**
 * What deleteThread leaves of a session it removed: the ids of its newest checkpoints, so that
 * a `putWrites` that finds no session can tell a checkpoint that was deleted (its writes must
 * go too) from one whose `put` has not landed yet (LangGraph's default 'async' durability
 * sends a task's writes before the checkpoint they belong to; they must stay).
 */
import type { JsonValue } from '@ckpt/core';

/**
 * How many checkpoint ids a mark keeps, newest first. A write arrives late only from a task
 * that was still running when the thread was deleted, and such a task writes to the checkpoint
 * its step started from: one of the newest of its thread.
 */
export const MARKED_IDS = 32;

function idsIn(mark: JsonValue | undefined): string[] {
  return Array.isArray(mark) ? mark.filter((id): id is string => typeof id === 'string') : [];
}

/** The mark `current` with `deleted` (newest first) added in front, cut to MARKED_IDS. */
export function markDeleted(current: JsonValue | undefined, deleted: string[]): JsonValue {
  return [...new Set([...deleted, ...idsIn(current)])].slice(0, MARKED_IDS);
}

/** Whether `mark` says that the checkpoint `checkpointId` was deleted. */
export function wasDeleted(mark: JsonValue | undefined, checkpointId: string): boolean {
  return idsIn(mark).includes(checkpointId);
}
