/**
 * What each checkpoint of a chat holds. Its transcript items are the messages it adds (see
 * records.ts). Its metadata is what the chat list shows (the title and how many messages the
 * branch holds up to it) and the ids of its messages, so that the tree of branches is known
 * from `list` alone, without reading any message. Its data names the message that identifies
 * the save (its idempotency key), that message's digest and the digest of every message the
 * save adds, so that a save which finds the key used can tell a retry (the same messages) from
 * an edit (the identifying message with other content) and from a new answer (the same
 * message, with other messages after it).
 */
import { createHash } from 'node:crypto';
import {
  allItems,
  type CheckpointStore,
  type JsonValue,
  MAX_NEEDS,
  type Metadata,
} from '@ckpt/core';
import { digestOf, type StoredMessage, textOf } from './records.js';

/**
 * The version of the layout this package writes, in each checkpoint's metadata (`layout`): from
 * version 2, each checkpoint needs the one it was written on, so that whatever prunes keeps its
 * branch whole. A checkpoint without it was written before that was so.
 */
export const LAYOUT = 2;

/** The metadata of a chat's checkpoint. */
export interface ChatMetadata {
  /** The layout it was written in (see LAYOUT); absent before layout 2. */
  layout?: number;
  /** The chat's title: the application's, or its first user message's text. */
  title: string | null;
  /** Set when the application chose the title, which then outlives branches. */
  titleSet?: true;
  /** How many messages the branch holds up to this checkpoint. */
  messages: number;
  /** The ids of the messages this checkpoint stores, in order. */
  ids: string[];
  /**
   * The last message of the branch up to this checkpoint, by id and digest: a save that finds
   * it in its list unchanged knows where its new messages go without reading any message.
   */
  tail?: { id: string; digest: string };
}

/** What a checkpoint's data says about the save that wrote it. */
export type SaveData =
  /** The empty first checkpoint every branch starts from. */
  | { root: true }
  /** A title set by the application. */
  | { title: true }
  /** New messages; `message` is the one whose id keys the save, `all` the digest of them all. */
  | { message: string; digest: string; all: string }
  /** A new version of the message `revision`, already on the branch, and the messages after it. */
  | { revision: string; digest: string; all: string };

/** Whether a checkpoint's data is a chat's root's. */
export function isRoot(data: JsonValue): boolean {
  return typeof data === 'object' && data !== null && !Array.isArray(data) && data.root === true;
}

/** The longest title kept, in code points. */
const TITLE_LENGTH = 100;
/** The longest idempotency key ckpt takes, in code points. */
const MAX_KEY = 255;

/** The metadata of a checkpoint, read leniently: a checkpoint this package did not write has none. */
export function readMetadata(metadata: Metadata | undefined): ChatMetadata {
  const m = (metadata ?? {}) as Partial<Record<keyof ChatMetadata, unknown>>;
  const read: ChatMetadata = {
    title: typeof m.title === 'string' ? m.title : null,
    messages: typeof m.messages === 'number' ? m.messages : 0,
    ids: Array.isArray(m.ids) ? m.ids.filter((id): id is string => typeof id === 'string') : [],
  };
  if (typeof m.layout === 'number') read.layout = m.layout;
  if (m.titleSet === true) read.titleSet = true;
  const tail = m.tail as { id?: unknown; digest?: unknown } | undefined;
  if (typeof tail?.id === 'string' && typeof tail.digest === 'string') {
    read.tail = { id: tail.id, digest: tail.digest };
  }
  return read;
}

/** `metadata` as stored, in this package's layout. */
export function toMetadata(metadata: ChatMetadata): Metadata {
  return { ...metadata, layout: LAYOUT } as unknown as Metadata;
}

/**
 * What a checkpoint written on checkpoint `on` (whose metadata is `onMeta`) needs: `on`, which
 * needs the rest of its branch in turn. On a checkpoint written before layout 2, whose branch
 * records no needs, every checkpoint stored up to it (its newest MAX_NEEDS), so that whatever
 * prunes keeps what the chat was before.
 */
export async function needsOn(
  store: CheckpointStore,
  sessionId: string,
  on: number,
  onMeta: ChatMetadata,
): Promise<number[]> {
  if (onMeta.layout === LAYOUT) return [on];
  const seqs: number[] = [];
  for await (const cp of allItems((cursor) => store.list(sessionId, { limit: 1000, cursor }))) {
    if (cp.seq <= on) seqs.push(cp.seq);
    if (seqs.length === MAX_NEEDS) break;
  }
  return seqs.reverse();
}

/** `data` as stored. */
export function toData(data: SaveData): JsonValue {
  return data as unknown as JsonValue;
}

/** The idempotency key of a save whose identifying message is `id` (a new one, or a revision). */
export function saveKey(data: SaveData): string {
  const key =
    'root' in data
      ? 'ai-sdk:root'
      : 'message' in data
        ? `ai-sdk:message:${data.message}`
        : 'revision' in data
          ? `ai-sdk:revision:${data.digest}:${data.revision}`
          : undefined;
  if (key === undefined) throw new Error('a title checkpoint has no idempotency key');
  return [...key].length <= MAX_KEY
    ? key
    : `ai-sdk:sha256:${createHash('sha256').update(key).digest('base64url')}`;
}

/** The tail a checkpoint whose last message is `last` records. */
export function tailOf(last: StoredMessage): { id: string; digest: string } {
  return { id: last.message.id, digest: digestOf(last.message) };
}

/** The data of a save that adds `records`, keyed by the first. */
export function messageData(records: StoredMessage[]): SaveData {
  const [keyed] = records;
  return { message: keyed!.message.id, digest: digestOf(keyed!.message), all: digestAll(records) };
}

/** The data of a save that stores a new version of a message on the branch (and what follows). */
export function revisionData(records: StoredMessage[]): SaveData {
  const [revised] = records;
  return {
    revision: revised!.message.id,
    digest: digestOf(revised!.message),
    all: digestAll(records),
  };
}

/** Whether a save's data names the same identifying message, with the same content, as `data`. */
export function sameLead(stored: unknown, data: SaveData): boolean {
  const { digest } = (stored ?? {}) as { digest?: unknown };
  return 'digest' in data && digest === data.digest;
}

function digestAll(records: StoredMessage[]): string {
  return digestOf(records.map((r) => r.message));
}

/** The title a chat gets from its messages: the first user message's text, shortened. */
export function titleOf(records: StoredMessage[]): string | null {
  for (const { message } of records) {
    if (message.role !== 'user') continue;
    const text = textOf(message).replace(/\s+/g, ' ');
    if (text === '') continue;
    const chars = [...text];
    return chars.length <= TITLE_LENGTH ? text : `${chars.slice(0, TITLE_LENGTH - 1).join('')}…`;
  }
  return null;
}
