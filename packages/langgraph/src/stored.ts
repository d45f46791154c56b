/**
 * What the saver stores as a ckpt checkpoint's data. A checkpoint holds the values of the
 * channels it changed (those in `newVersions`) and, for every other channel it has, the seq of
 * the checkpoint of the same session that holds that channel's value at the same version; so
 * each (channel, version) is stored once, and a checkpoint is rebuilt from its own values and
 * those of the checkpoints it points to.
 */
import type { JsonValue } from '@ckpt/core';
import type { SerializerProtocol } from '@langchain/langgraph-checkpoint';

/** A value as the saver's `serde` wrote it: its type, and its bytes as text or base64. */
export type Encoded = [type: string, text: string] | [type: string, base64: string, 'base64'];

/** A channel version: LangGraph's numbers, or a saver's strings. */
export type Version = number | string;

/** One checkpoint as stored. */
export interface StoredData {
  /** Format of this layout, for readers of later versions. */
  format: 1;
  /** LangGraph's checkpoint id. */
  id: string;
  /** The checkpoint id of the parent given to `put`, or null. */
  parentId: string | null;
  /** The checkpoint without `channel_values`. */
  checkpoint: Encoded;
  metadata: Encoded;
  /** Values of the channels this checkpoint changed. */
  values: Record<string, Held>;
  /** Channels whose value another checkpoint of the session holds: channel -> [version, seq]. */
  refs: Record<string, [Version, number]>;
}

/**
 * A channel value as a checkpoint holds it: whole, or as the text that follows the first
 * `keep` characters of an earlier version's text (a list that grew by a few items, say).
 * `on` names the checkpoints, oldest first, whose entries for the channel rebuild that earlier
 * text: the first holds it whole, each later one applies its own tail.
 */
export type Held =
  | { v: Version; type: string; text: string }
  | { v: Version; type: string; base64: string }
  | { v: Version; type: string; tail: string; keep: number; on: number[] };

/** The entry that holds `encoded` whole. */
export function heldWhole(version: Version, encoded: Encoded): Held {
  const [type, text, form] = encoded;
  return form === 'base64' ? { v: version, type, base64: text } : { v: version, type, text };
}

/** Where each channel's value of one checkpoint is held: channel -> [version, seq]. */
export type ValueIndex = Record<string, [Version, number]>;

const decoder = new TextDecoder('utf-8', { fatal: true });

/** `value` through `serde`, as JSON text when its bytes are UTF-8 (JsonPlusSerializer's are). */
export async function encodeValue(serde: SerializerProtocol, value: unknown): Promise<Encoded> {
  const [type, bytes] = await serde.dumpsTyped(value);
  if (type !== 'bytes') {
    try {
      return [type, decoder.decode(bytes)];
    } catch {}
  }
  return [type, Buffer.from(bytes).toString('base64'), 'base64'];
}

/** The value `encodeValue` encoded. */
export function decodeValue(serde: SerializerProtocol, encoded: Encoded): Promise<unknown> {
  const [type, text, form] = encoded;
  return serde.loadsTyped(
    type,
    form === 'base64' ? new Uint8Array(Buffer.from(text, 'base64')) : text,
  );
}

/** The stored layout of a ckpt checkpoint's data, or null when the saver did not write it. */
export function storedData(data: JsonValue): StoredData | null {
  if (typeof data !== 'object' || data === null || Array.isArray(data)) return null;
  return data.format === 1 && typeof data.id === 'string' ? (data as unknown as StoredData) : null;
}

/** Where each of `stored`'s channels is held, given that `stored` is at `seq`. */
export function indexOf(stored: StoredData, seq: number): ValueIndex {
  const index: ValueIndex = record();
  for (const [channel, at] of Object.entries(stored.refs)) index[channel] = at;
  for (const [channel, held] of Object.entries(stored.values)) index[channel] = [held.v, seq];
  return index;
}

/**
 * The seqs of the checkpoints a checkpoint holding `values` and `refs` reads from directly,
 * ascending: those its refs point to, and for each tail the checkpoint whose entry it follows
 * (which needs the rest of the chain in turn). Written as the checkpoint's `needs`, so that
 * the store keeps them, and what they need, while it keeps the checkpoint.
 */
export function neededSeqs(
  values: Record<string, Held>,
  refs: Record<string, [Version, number]>,
): number[] {
  const seqs = new Set<number>();
  for (const [, seq] of Object.values(refs)) seqs.add(seq);
  for (const held of Object.values(values)) {
    const follows = 'on' in held ? held.on.at(-1) : undefined;
    if (follows !== undefined) seqs.add(follows);
  }
  return [...seqs].sort((a, b) => a - b);
}

/** An empty record without a prototype, so that a channel named `__proto__` is a plain key. */
export function record<T>(): Record<string, T> {
  return Object.create(null) as Record<string, T>;
}
