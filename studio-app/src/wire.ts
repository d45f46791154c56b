/**
 * The one contract between the studio's page and its server (in @ckpt/cli, which imports it as
 * `@ckpt/studio-app/wire`): the API's answers as the page receives them, the shapes of
 * `ckpt … --json` (see the CLI's README), times as ISO 8601 text; and how a transcript item
 * reads as a chat message, which the page and the command's own transcript lines share. Neither
 * side imports anything else of the other (test/wire-boundary.test.ts).
 */

export { type MessageView, messageView, type ToolCallView } from './message-view.js';

/** A JSON value. */
export type Json = null | boolean | number | string | Json[] | { [key: string]: Json };

/** A page of a listing; pass `cursor` back for the next one (null: no more). */
export interface Page<T> {
  items: T[];
  cursor: string | null;
}

/** A session's summary, as `ckpt sessions --json` lists it. */
export interface SessionInfo {
  sessionId: string;
  head: number;
  checkpoints: number;
  forkedFrom: { sessionId: string; seq: number } | null;
  metadata: { [key: string]: Json };
  createdAt: string;
  updatedAt: string;
  /** Its tags (`{}` when none), keys in ascending order. */
  tags: { [key: string]: string };
}

/**
 * A tag written as text, `key=value`: a `where` parameter of `/api/sessions` and
 * `/api/events` (one a tag, `?where=user%3Dann&where=status%3Dopen`), as `ckpt sessions
 * --where` and `ckpt tag` take them. It splits at the first `=`, since a tag's key never holds
 * one and a value may; null when there is no `=` or nothing before it.
 */
export function tagPair(text: string): [key: string, value: string] | null {
  const at = text.indexOf('=');
  return at <= 0 ? null : [text.slice(0, at), text.slice(at + 1)];
}

/**
 * Checkpoints `seq` … `seq + length - 1`, each after the first the child of the one before,
 * all on the active timeline or all off it.
 */
export interface TopologyRun {
  seq: number;
  length: number;
  parent: number | null;
  parentMissing: boolean;
  active: boolean;
}

/** A session's tree, its shape alone (`/api/sessions/<id>/topology`). */
export interface SessionTopology {
  sessionId: string;
  info: SessionInfo;
  runs: TopologyRun[];
  /** The sessions forked from a checkpoint, by its seq. */
  forks: { [seq: string]: string[] };
  /** Only on a store that keeps pins. */
  pinned?: number[];
}

/** What the tree shows beside a checkpoint (`/api/sessions/<id>/checkpoints?seqs=`). */
export interface CheckpointDetail {
  seq: number;
  createdAt: string;
  metadata: { [key: string]: Json };
}

/** A checkpoint, data included. */
export interface Checkpoint {
  sessionId: string;
  seq: number;
  parent: number | null;
  data: Json;
  metadata: { [key: string]: Json };
  createdAt: string;
  pinned?: boolean;
}

/** `ckpt show --json`. */
export interface Shown {
  sessionId: string;
  info: SessionInfo;
  checkpoint: Checkpoint;
  transcript: Json[];
}

/** One item of `ckpt transcript --json`. */
export interface TranscriptEntry {
  seq: number;
  index: number;
  item: Json;
  createdAt: string;
}

/** One line of `ckpt diff --json`. */
export interface Change {
  path: string;
  op: 'add' | 'remove' | 'change';
  before?: Json;
  after?: Json;
}

/** A state value with its key. */
export interface StateEntry {
  key: string;
  value: Json;
}

/** What the studio says about itself. */
export interface StudioInfo {
  backend: string;
  write: boolean;
  version: string;
}
