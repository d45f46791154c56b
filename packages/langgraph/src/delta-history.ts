/**
 * LangGraph's delta channel history: for each channel, the pending writes of a checkpoint's
 * ancestors, oldest first, back to the nearest ancestor that holds a value for it (the seed).
 */
import type { CheckpointStore, Checkpoint as CkptCheckpoint } from '@ckpt/core';
import type { CheckpointPendingWrite, DeltaChannelHistory } from '@langchain/langgraph-checkpoint';
import type { ValueReader } from './channel-values.js';
import { checkpointById } from './checkpoint-metadata.js';
import { storedData } from './stored.js';

/** Where the ancestors of a checkpoint are read from. */
export interface Ancestry {
  store: CheckpointStore;
  sessionId: string;
  /** The checkpoint whose ancestors are walked, or null when it is not stored. */
  start: CkptCheckpoint | null;
  reader: ValueReader;
  pendingWrites(checkpointId: string): Promise<CheckpointPendingWrite[]>;
}

/**
 * The history of each of `channels` before `from.start` (none without `from`); walks the
 * parents by id, each checkpoint read once, decoding only what the channels need.
 */
export async function deltaChannelHistory(
  channels: string[],
  from: Ancestry | null,
): Promise<Record<string, DeltaChannelHistory>> {
  const blocks = new Map<string, CheckpointPendingWrite[][]>(channels.map((ch) => [ch, []]));
  const seeds = new Map<string, unknown>();
  const remaining = new Set(channels);
  const start = from?.start ?? null;
  let parentId = start === null ? null : (storedData(start.data)?.parentId ?? null);
  // Newest ancestor first; each contributes its writes, until a channel meets its value.
  while (from !== null && parentId !== null && remaining.size > 0) {
    const found = await checkpointById(from.store, from.sessionId, parentId);
    const stored = found === null ? null : storedData(found.data);
    if (found === null || stored === null) break;
    const writes = await from.pendingWrites(stored.id);
    for (const channel of remaining) {
      blocks.get(channel)!.push(writes.filter((w) => w[1] === channel));
    }
    const held = [...remaining].filter(
      (ch) => Object.hasOwn(stored.values, ch) || Object.hasOwn(stored.refs, ch),
    );
    if (held.length > 0) {
      const { values } = await from.reader.values(stored, found.seq);
      for (const channel of held) {
        if (Object.hasOwn(values, channel)) seeds.set(channel, values[channel]);
        remaining.delete(channel);
      }
    }
    parentId = stored.parentId;
  }
  const result: Record<string, DeltaChannelHistory> = {};
  for (const channel of channels) {
    const entry: DeltaChannelHistory = { writes: blocks.get(channel)!.reverse().flat() };
    if (seeds.has(channel)) entry.seed = seeds.get(channel);
    result[channel] = entry;
  }
  return result;
}
