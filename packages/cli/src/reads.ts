/**
 * What each read of a store gives: the values `ckpt sessions|show|tree|transcript|history
 * --json` print and the studio's API serves, made in one place so that both stay the same.
 */
import {
  allItems,
  type Checkpoint,
  type CheckpointInfo,
  type CheckpointStore,
  CkptError,
  type JsonValue,
  type Page,
  type PageOptions,
  type SessionInfo,
  type TranscriptEntry,
} from '@ckpt/core';
import { forksOf } from './forks.js';
import { diffJson, type JsonChange } from './json-diff.js';
import { type TreeNode, treeNodes } from './tree.js';

/** Every item of a paged listing, in an array. */
export async function all<T>(
  fetch: (cursor: string | null) => Promise<{ items: T[]; cursor: string | null }>,
): Promise<T[]> {
  const items: T[] = [];
  for await (const item of allItems(fetch)) items.push(item);
  return items;
}

/** The session's summary, or NOT_FOUND saying how to see which sessions there are. */
export async function existingSession(store: CheckpointStore, id: string): Promise<SessionInfo> {
  const info = await store.info(id);
  if (info === null) {
    throw new CkptError(
      'NOT_FOUND',
      `session ${JSON.stringify(id)} does not exist; list the sessions with: ckpt sessions`,
      { details: { argument: 'sessionId' } },
    );
  }
  return info;
}

/** Which page of the catalog to read. */
export interface SessionsQuery {
  limit?: number;
  cursor?: string | null;
  /** Only the sessions whose id starts with it. */
  prefix?: string;
}

/** A page of the catalog, most recently updated first (`ckpt sessions --json`). */
export function sessionsPage(
  store: CheckpointStore,
  query: SessionsQuery,
): Promise<Page<SessionInfo>> {
  const page = { limit: query.limit, cursor: query.cursor ?? null };
  // The prefix is left out when empty, so that a store without prefix search lists as before.
  return store.sessions(query.prefix ? ({ ...page, prefix: query.prefix } as PageOptions) : page);
}

/** A session's summary and one checkpoint of it, data included (`ckpt show --json`). */
export interface Shown {
  sessionId: string;
  info: SessionInfo;
  checkpoint: Checkpoint;
  /** The transcript items the checkpoint appended. */
  transcript: JsonValue[];
}

/** The session's summary and its head checkpoint, or checkpoint `seq`. */
export async function showCheckpoint(
  store: CheckpointStore,
  id: string,
  seq?: number,
): Promise<Shown> {
  const info = await existingSession(store, id);
  const checkpoint = await stored(store, id, seq);
  return { sessionId: id, info, checkpoint, transcript: await itemsOf(store, id, checkpoint.seq) };
}

/** Checkpoint `seq` (default: the head) of a session known to exist, or NOT_FOUND. */
async function stored(store: CheckpointStore, id: string, seq?: number): Promise<Checkpoint> {
  const checkpoint = await store.load(id, seq);
  if (checkpoint === null) {
    throw new CkptError(
      'NOT_FOUND',
      `session ${JSON.stringify(id)} has no stored checkpoint ${seq}; see its checkpoints with: ckpt tree ${JSON.stringify(id)}`,
      { details: { argument: 'seq' } },
    );
  }
  return checkpoint;
}

/**
 * The transcript items checkpoint `seq` appended, in order: none unless it is on the active
 * timeline, whose transcript is all there is to read. A checkpoint's seq is above its
 * parent's, so the transcript (newest first) is read only down to `seq`.
 */
async function itemsOf(store: CheckpointStore, id: string, seq: number): Promise<JsonValue[]> {
  const items: JsonValue[] = [];
  for await (const entry of allItems((cursor) => store.transcript(id, { limit: 1000, cursor }))) {
    if (entry.seq < seq) break;
    if (entry.seq === seq) items.push(entry.item);
  }
  return items.reverse();
}

/** A session and every stored checkpoint of it as a tree node (`ckpt tree --json`). */
export interface SessionTree {
  sessionId: string;
  info: SessionInfo;
  checkpoints: TreeNode[];
}

/**
 * The session's tree. `forks` says which checkpoints other sessions were forked from; by
 * default the whole catalog is read to find them.
 */
export async function sessionTree(
  store: CheckpointStore,
  id: string,
  forks: (id: string) => Promise<Map<number, string[]>> = (of) => forksOf(store, of),
): Promise<SessionTree> {
  const info = await existingSession(store, id);
  const [checkpoints, timeline, forked] = await Promise.all([
    all((cursor) => store.list(id, { limit: 1000, cursor })),
    store.history(id),
    forks(id),
  ]);
  return {
    sessionId: id,
    info,
    checkpoints: treeNodes(checkpoints, info.head, timeline, forked),
  };
}

/** Which page of a transcript to read. */
export interface TranscriptQuery {
  limit?: number;
  cursor?: string | null;
}

/** A page of a session's transcript, with the session's id. */
export interface TranscriptPage extends Page<TranscriptEntry> {
  sessionId: string;
}

/** A page of the active timeline's transcript, newest first (`ckpt transcript --json`). */
export async function transcriptPage(
  store: CheckpointStore,
  id: string,
  query: TranscriptQuery,
): Promise<TranscriptPage> {
  await existingSession(store, id);
  const page = await store.transcript(id, { limit: query.limit, cursor: query.cursor ?? null });
  return { sessionId: id, ...page };
}

/** The active timeline: the head and its stored ancestors, oldest first (`ckpt history --json`). */
export async function timeline(store: CheckpointStore, id: string): Promise<CheckpointInfo[]> {
  await existingSession(store, id);
  const [seqs, infos] = await Promise.all([
    store.history(id),
    all((cursor) => store.list(id, { limit: 1000, cursor })),
  ]);
  const bySeq = new Map(infos.map((cp) => [cp.seq, cp]));
  return seqs.map((seq) => bySeq.get(seq)).filter((cp) => cp !== undefined);
}

/**
 * What changed from checkpoint `from` (default: `to`'s parent) to checkpoint `to`, in data and
 * metadata (`ckpt diff --json`).
 */
export async function checkpointDiff(
  store: CheckpointStore,
  id: string,
  to: number,
  from?: number,
): Promise<JsonChange[]> {
  await existingSession(store, id);
  const after = await stored(store, id, to);
  const base = from ?? after.parent;
  // The first checkpoint of a session is compared with nothing: all of it was added.
  const before = base === null ? null : await stored(store, id, base);
  const compared = (cp: Checkpoint) => ({ data: cp.data, metadata: cp.metadata });
  return diffJson(before === null ? {} : compared(before), compared(after));
}
