/** What `list`'s `before` and `filter` options mean for the checkpoints of one session. */
import type { CheckpointStore } from '@ckpt/core';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { CheckpointMetadata } from '@langchain/langgraph-checkpoint';
import { checkpointById } from './checkpoint-metadata.js';
import { namespaceOf, type Target, threadOf } from './names.js';

/**
 * The seq of the checkpoint `beforeId` of the config `before` in the session of `target`, to
 * start the listing below it; undefined when it names another thread or namespace, or none.
 */
export async function seqBefore(
  store: CheckpointStore,
  sessionId: string,
  target: Target,
  before: RunnableConfig | undefined,
  beforeId: string | undefined,
): Promise<number | undefined> {
  if (before === undefined || beforeId === undefined) return undefined;
  if (threadOf(before) !== target.threadId || namespaceOf(before) !== target.namespace) {
    return undefined;
  }
  return (await checkpointById(store, sessionId, beforeId))?.seq;
}

/** Whether `metadata` has every key of `filter` at an equal value. */
export function matchesFilter(
  metadata: CheckpointMetadata | undefined,
  filter: Record<string, unknown> | undefined,
): boolean {
  if (filter === undefined) return true;
  const own = (metadata ?? {}) as Record<string, unknown>;
  return Object.entries(filter).every(([key, value]) => deepEqual(own[key], value));
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}
