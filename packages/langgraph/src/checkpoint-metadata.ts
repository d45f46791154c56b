/**
 * The ckpt metadata of a LangGraph checkpoint: its `checkpoint_id`, so that a session's listing
 * names the LangGraph checkpoints it holds, with its source and step.
 */
import {
  allItems,
  type CheckpointStore,
  type Checkpoint as CkptCheckpoint,
  type Metadata,
} from '@ckpt/core';
import type { CheckpointMetadata } from '@langchain/langgraph-checkpoint';

/** Page size of the listings walked for ids. */
const PAGE = 100;

/** The ckpt metadata of a LangGraph checkpoint: its id, source and step, for listings. */
export function ckptMetadata(id: string, metadata: CheckpointMetadata): Metadata {
  const out: Metadata = { checkpoint_id: id };
  if (typeof metadata?.source === 'string') out.source = metadata.source;
  if (typeof metadata?.step === 'number' && Number.isFinite(metadata.step))
    out.step = metadata.step;
  return out;
}

/** The LangGraph ids of a session's stored checkpoints, newest first. */
export async function checkpointIds(store: CheckpointStore, sessionId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const item of allItems((cursor) => store.list(sessionId, { limit: PAGE, cursor }))) {
    const id = item.metadata.checkpoint_id;
    if (typeof id === 'string') ids.push(id);
  }
  return ids;
}

/**
 * The stored checkpoint whose LangGraph id is `id`, or null. The saver writes each with its id
 * as the idempotency key, found in one read; a session that core's `fork`, an import or a copy
 * made carries no idempotency keys, so there the id is looked for in the listing's metadata.
 */
export async function checkpointById(
  store: CheckpointStore,
  sessionId: string,
  id: string,
): Promise<CkptCheckpoint | null> {
  const keyed = await store.loadByKey(sessionId, id);
  if (keyed !== null) return keyed;
  for await (const item of allItems((cursor) => store.list(sessionId, { limit: PAGE, cursor }))) {
    if (item.metadata.checkpoint_id === id) return store.load(sessionId, item.seq);
  }
  return null;
}
