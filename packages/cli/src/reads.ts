/**
 * What each read of a store gives: the values `ckpt sessions|show|tree|transcript|history|diff
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
  type SessionInfo,
  type TranscriptEntry,
} from '@ckpt/core';
import { forksOf } from './forks.js';
import { shellWord } from './io.js';
import { diffJson, type JsonChange } from './json-diff.js';
import { type SessionRef, threadSessionId } from './session-ref.js';
import { type TreeNode, treeNodes } from './tree.js';

/** How a message names a command to run next (the command adds the store it was given). */
export type CommandLine = (words: string[]) => string;

/** `ckpt` and the words, as a shell takes them. */
export const plainCommandLine: CommandLine = (words) => ['ckpt', ...words].map(shellWord).join(' ');

/** The pages of a paged listing, one after the other, each fetched when the last is used. */
export async function* allPages<T>(
  fetch: (cursor: string | null) => Promise<{ items: T[]; cursor: string | null }>,
): AsyncGenerator<T[]> {
  let cursor: string | null = null;
  do {
    const page = await fetch(cursor);
    yield page.items;
    cursor = page.cursor;
  } while (cursor !== null);
}

/** Every item of a paged listing, in an array. */
export async function all<T>(
  fetch: (cursor: string | null) => Promise<{ items: T[]; cursor: string | null }>,
): Promise<T[]> {
  const items: T[] = [];
  for await (const item of allItems(fetch)) items.push(item);
  return items;
}

/** The session's summary, or NOT_FOUND saying how to see which sessions there are. */
export async function existingSession(
  store: CheckpointStore,
  ref: SessionRef,
): Promise<SessionInfo> {
  const info = await store.info(ref.sessionId);
  if (info === null) {
    const isThread = ref.words[0] === '--thread';
    const kept = isThread
      ? ` (a LangGraph saver keeps it in session ${JSON.stringify(ref.sessionId)})`
      : '';
    // Someone who gives a LangGraph thread's id as a session id is told how to name it.
    const thread =
      !isThread && (await store.info(threadSessionId(ref.sessionId))) !== null
        ? `; a LangGraph thread has that id: give --thread ${shellWord(ref.sessionId)}`
        : '; list the sessions with: ckpt sessions';
    throw new CkptError('NOT_FOUND', `${ref.label} does not exist${kept}${thread}`, {
      details: { argument: 'sessionId' },
    });
  }
  return info;
}

/** Checkpoint `seq` (default: the head) of a session known to exist, or NOT_FOUND. */
export async function storedCheckpoint(
  store: CheckpointStore,
  ref: SessionRef,
  seq: number | undefined,
  commandLine: CommandLine = plainCommandLine,
): Promise<Checkpoint> {
  const checkpoint = await store.load(ref.sessionId, seq);
  if (checkpoint === null) {
    throw new CkptError(
      'NOT_FOUND',
      `${ref.label} has no stored checkpoint ${seq}; see its checkpoints with: ${commandLine(['tree', ...ref.words])}`,
      { details: { argument: 'seq' } },
    );
  }
  return checkpoint;
}

/** Which page of the catalog to read. */
export interface SessionsQuery {
  limit?: number;
  cursor?: string | null;
  /** Only the sessions whose id starts with it. */
  prefix?: string;
  /** Only the sessions that have every one of these tags. */
  where?: Record<string, string>;
}

/** A page of the catalog, most recently updated first (`ckpt sessions --json`). */
export function sessionsPage(
  store: CheckpointStore,
  query: SessionsQuery,
): Promise<Page<SessionInfo>> {
  return store.sessions({
    limit: query.limit,
    cursor: query.cursor ?? null,
    prefix: query.prefix,
    where: query.where,
  });
}

/** A session's summary and one checkpoint of it, data included (`ckpt show --json`). */
export interface Shown {
  sessionId: string;
  info: SessionInfo;
  checkpoint: Checkpoint;
  /** The transcript items the checkpoint appended. */
  transcript: JsonValue[];
}

/** The transcript items checkpoint `seq` appended, in order. */
async function itemsOf(
  store: CheckpointStore,
  sessionId: string,
  seq: number,
): Promise<JsonValue[]> {
  if ((await store.history(sessionId)).includes(seq)) {
    // The transcript walks the active timeline newest first: its items come before older ones.
    const items: JsonValue[] = [];
    for await (const entry of allItems((cursor) =>
      store.transcript(sessionId, { limit: 1000, cursor }),
    )) {
      if (entry.seq < seq) break;
      if (entry.seq === seq) items.push(entry.item);
    }
    return items.reverse();
  }
  // Off the timeline, only the export holds a checkpoint's items; it is read up to that seq.
  const session = await store.exportSession(sessionId);
  for await (const cp of session?.checkpoints ?? []) {
    if (cp.seq === seq) return cp.transcript;
  }
  return [];
}

/** The session's summary and its head checkpoint, or checkpoint `seq`, with the items it added. */
export async function showCheckpoint(
  store: CheckpointStore,
  ref: SessionRef,
  seq?: number,
  commandLine: CommandLine = plainCommandLine,
): Promise<Shown> {
  const info = await existingSession(store, ref);
  const checkpoint = await storedCheckpoint(store, ref, seq, commandLine);
  const transcript = await itemsOf(store, ref.sessionId, checkpoint.seq);
  return { sessionId: ref.sessionId, info, checkpoint, transcript };
}

/** A session and every stored checkpoint of it as a tree node (`ckpt tree --json`). */
export interface SessionTree {
  sessionId: string;
  info: SessionInfo;
  checkpoints: TreeNode[];
}

/** Every stored checkpoint of a session, seq descending. */
export const allCheckpoints = (store: CheckpointStore, sessionId: string) =>
  all((cursor) => store.list(sessionId, { limit: 1000, cursor }));

/** Where a session's tree comes from, when not straight from the store. */
export interface TreeSources {
  /** Which checkpoints other sessions were forked from (default: the whole catalog is read to find them). */
  forks?: (id: string) => Promise<Map<number, string[]>>;
  /** The session's stored checkpoints, given its summary (default: read them all). */
  checkpoints?: (info: SessionInfo) => Promise<CheckpointInfo[]>;
}

/** The session's tree. */
export async function sessionTree(
  store: CheckpointStore,
  ref: SessionRef,
  sources: TreeSources = {},
): Promise<SessionTree> {
  const { sessionId } = ref;
  const {
    forks = (of) => forksOf(store, of),
    checkpoints: read = () => allCheckpoints(store, sessionId),
  } = sources;
  const info = await existingSession(store, ref);
  const [checkpoints, forked] = await Promise.all([read(info), forks(sessionId)]);
  return { sessionId, info, checkpoints: treeNodes(checkpoints, info.head, forked) };
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
  ref: SessionRef,
  query: TranscriptQuery,
): Promise<TranscriptPage> {
  await existingSession(store, ref);
  const page = await store.transcript(ref.sessionId, {
    limit: query.limit,
    cursor: query.cursor ?? null,
  });
  return { sessionId: ref.sessionId, ...page };
}

/** The active timeline: the head and its stored ancestors, oldest first (`ckpt history --json`). */
export async function timeline(store: CheckpointStore, ref: SessionRef): Promise<CheckpointInfo[]> {
  await existingSession(store, ref);
  const [seqs, infos] = await Promise.all([
    store.history(ref.sessionId),
    allCheckpoints(store, ref.sessionId),
  ]);
  const bySeq = new Map(infos.map((cp) => [cp.seq, cp]));
  return seqs.map((seq) => bySeq.get(seq)).filter((cp) => cp !== undefined);
}

/**
 * What changed in data and metadata from checkpoint `from` (default: `to`'s parent) to
 * checkpoint `to` (`ckpt diff --json`). The first checkpoint of a session, with no parent and
 * no `from`, is compared with nothing: all of it was added.
 */
export async function checkpointDiff(
  store: CheckpointStore,
  ref: SessionRef,
  to: number,
  from?: number,
  commandLine: CommandLine = plainCommandLine,
): Promise<JsonChange[]> {
  await existingSession(store, ref);
  const compared = (cp: Checkpoint) => ({ data: cp.data, metadata: cp.metadata });
  const before = from === undefined ? null : await storedCheckpoint(store, ref, from, commandLine);
  const after = await storedCheckpoint(store, ref, to, commandLine);
  const base =
    from === undefined && after.parent !== null
      ? await storedCheckpoint(store, ref, after.parent, commandLine)
      : before;
  return diffJson(base === null ? {} : compared(base), compared(after));
}
