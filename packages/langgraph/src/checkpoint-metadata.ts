/**
 * The ckpt metadata of a LangGraph checkpoint: its `checkpoint_id`, so that a session's listing
 * names the LangGraph checkpoints it holds, with its source and step, and the layout it was
 * written in.
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

/**
 * The version of the layout the saver writes, in each checkpoint's ckpt metadata (`layout`).
 * From version 2, a checkpoint names as its needs the checkpoints whose values it reads, so
 * that whatever prunes keeps them. Before, it named none: what it needs is unknown.
 */
export const LAYOUT = 2;

/** Whether a checkpoint with this ckpt metadata names what it needs (see LAYOUT). */
export function needsKnown(metadata: Metadata | undefined): boolean {
  return metadata?.layout === LAYOUT;
}

/** The ckpt metadata of a LangGraph checkpoint: its id, source, step and layout, for listings. */
export function ckptMetadata(id: string, metadata: CheckpointMetadata): Metadata {
  const out: Metadata = { checkpoint_id: id, layout: LAYOUT };
  if (typeof metadata?.source === 'string') out.source = metadata.source;
  if (typeof metadata?.step === 'number' && Number.isFinite(metadata.step))
    out.step = metadata.step;
  return out;
}

/** A stored checkpoint of a session as its listing gives it. */
export interface Listed {
  seq: number;
  /** Its LangGraph id; undefined for a checkpoint the saver did not write. */
  id: string | undefined;
  /** Whether it names what it needs (see LAYOUT). */
  needsKnown: boolean;
}

/** A session's stored checkpoints, newest first. */
export async function listed(store: CheckpointStore, sessionId: string): Promise<Listed[]> {
  const out: Listed[] = [];
  for await (const item of allItems((cursor) => store.list(sessionId, { limit: PAGE, cursor }))) {
    const id = item.metadata.checkpoint_id;
    out.push({
      seq: item.seq,
      id: typeof id === 'string' ? id : undefined,
      needsKnown: needsKnown(item.metadata),
    });
  }
  return out;
}

/** The LangGraph ids of a session's stored checkpoints, newest first. */
export async function checkpointIds(store: CheckpointStore, sessionId: string): Promise<string[]> {
  return (await listed(store, sessionId)).flatMap(({ id }) => (id === undefined ? [] : [id]));
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
