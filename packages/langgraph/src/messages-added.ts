/**
 * The messages a checkpoint added to the graph's message channels, as the transcript items its
 * `put` appends, told from what the saver remembers of its parent's message channels (or, after
 * a restart or on a branch, read once from the parent).
 */
import type { JsonValue } from '@ckpt/core';
import type {
  ChannelVersions,
  Checkpoint,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import type { ValueReader } from './channel-values.js';
import type { Seen } from './parent-cache.js';
import { decodeValue } from './stored.js';
import {
  addedMessages,
  type KnownMessages,
  knownMessages,
  messagesIn,
  NO_MESSAGES,
  transcriptItem,
} from './transcript.js';

/** What to remember of the message channels among a checkpoint's decoded `values`. */
export function messageChannelsOf(values: Record<string, unknown>): Map<string, KnownMessages> {
  const known = new Map<string, KnownMessages>();
  for (const [channel, value] of Object.entries(values)) {
    const messages = messagesIn(value);
    if (messages !== undefined) known.set(channel, knownMessages(messages));
  }
  return known;
}

/**
 * The transcript items of the messages `checkpoint` added to its message channels (those in
 * `newVersions`) on the checkpoint `parentId` (null for a thread's first), which the saver
 * knows as `parent` (null when it is not stored), and what to remember of its message
 * channels for the next put. It never fails a put: a value it cannot read is not
 * transcribed.
 */
export async function messagesAdded(
  reader: ValueReader,
  serde: SerializerProtocol,
  parentId: string | null,
  parent: Seen | null,
  checkpoint: Checkpoint,
  newVersions: ChannelVersions,
): Promise<{ items: JsonValue[]; known: Map<string, KnownMessages> }> {
  const items: JsonValue[] = [];
  const known = new Map<string, KnownMessages>();
  for (const channel of Object.keys(newVersions)) {
    try {
      if (!Object.hasOwn(checkpoint.channel_values, channel)) continue;
      const messages = messagesIn(checkpoint.channel_values[channel]);
      if (messages === undefined) continue;
      known.set(channel, knownMessages(messages));
      const before =
        parentId === null ? NO_MESSAGES : await messagesAt(reader, serde, parent, channel);
      // A parent the saver cannot read: what it held, and so what was added, is unknown.
      if (before === undefined) continue;
      for (const message of addedMessages(messages, before)) {
        const item = transcriptItem(message, channel);
        if (item !== undefined) items.push(item);
      }
    } catch {}
  }
  // The channels it did not change hold what its parent's did.
  for (const [channel, was] of parent?.messages ?? []) {
    if (
      !known.has(channel) &&
      parent?.index[channel]?.[0] === checkpoint.channel_versions[channel]
    ) {
      known.set(channel, was);
    }
  }
  return { items, known };
}

/** The messages of `channel` at the checkpoint `parent`, read once when not yet known. */
async function messagesAt(
  reader: ValueReader,
  serde: SerializerProtocol,
  parent: Seen | null,
  channel: string,
): Promise<KnownMessages | undefined> {
  if (parent === null) return undefined;
  const had = parent.messages.get(channel);
  if (had !== undefined) return had;
  const at = parent.index[channel];
  if (at === undefined) return NO_MESSAGES;
  // After a restart, or on a branch from an earlier checkpoint: its value, decoded once.
  const held = await reader.held(at[1], channel);
  const encoded = held === undefined ? undefined : await reader.encoded(channel, held);
  if (encoded === undefined) return undefined;
  const messages = messagesIn(await decodeValue(serde, encoded));
  const known = messages === undefined ? NO_MESSAGES : knownMessages(messages);
  parent.messages.set(channel, known);
  return known;
}
