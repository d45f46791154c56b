import type { Codec } from '../codecs/codec.js';
import type { JsonCompatible, JsonInput, JsonValue, Metadata } from '../values/json.js';

/** One saved step of a session, whose data is of type `T`. */
export interface Checkpoint<T = JsonValue> {
  sessionId: string;
  /** 1, 2, 3, … within the session; never reused while the session exists. */
  seq: number;
  /** The session's head when this checkpoint was written. */
  parent: number | null;
  /** Exactly what was saved, key order kept. */
  data: T;
  metadata: Metadata;
  /** Millisecond precision. */
  createdAt: Date;
}

/** A checkpoint without its data, as `list` returns it, with its pin. */
export interface CheckpointInfo extends Omit<Checkpoint, 'data'> {
  /** Whether it is pinned (`pin`): no prune, sweep or retention removes it. */
  pinned: boolean;
  /** The note given to `pin`; null when not pinned or pinned without one. */
  pinNote: string | null;
}

/** One session as `info` and `sessions` describe it. */
export interface SessionInfo {
  sessionId: string;
  /** The current head seq. */
  head: number;
  /** How many checkpoints are stored now. */
  checkpoints: number;
  forkedFrom: { sessionId: string; seq: number } | null;
  /** The head checkpoint's metadata. */
  metadata: Metadata;
  createdAt: Date;
  /** The last checkpoint or rollback. */
  updatedAt: Date;
  /** Its tags (`{}` when none), keys in ascending order: set with a checkpoint or `setTags`. */
  tags: Record<string, string>;
}

/** One transcript item, with the checkpoint that appended it. */
export interface TranscriptEntry {
  seq: number;
  /** The item's position within its checkpoint's `transcript` array. */
  index: number;
  item: JsonValue;
  createdAt: Date;
}

/** One page of a listing. */
export interface Page<T> {
  items: T[];
  /** Pass back for the next page; null when there is no more. */
  cursor: string | null;
}

/** Where a page starts and how long it is. */
export interface PageOptions {
  /** 1..1000, default 50. */
  limit?: number;
  cursor?: string | null;
}

/** A page of `CheckpointStore.list`, optionally starting below a seq. */
export interface ListOptions extends PageOptions {
  /** Only checkpoints with a seq below this one (a positive integer). */
  beforeSeq?: number;
}

/** Options of a `CheckpointStore`. */
export interface StoreOptions {
  /**
   * Largest size of one checkpoint (data + metadata + transcript items) as JSON text, before
   * any codec. Default 8 MiB.
   */
  maxPayloadBytes?: number;
  /**
   * What stored values go through: `compress()` and `encrypt()` codecs, applied in order on write
   * and reversed on read, to checkpoint data, transcript items and state values.
   */
  codecs?: Codec[];
  /**
   * Prune each session this store writes as it grows: a checkpoint goes once it is beyond the
   * `keepLast` newest and older than `olderThan` milliseconds (every rule given must let it
   * go); the head, pinned checkpoints and what kept ones need stay. Applied after every tenth
   * checkpoint of a session (see "Keeping storage bounded" in core's README). Idle sessions
   * are deleted only by `sweep()`.
   */
  retention?: { keepLast?: number; olderThan?: number };
}

/** Options of `openStore`: the store's, and whether it may create a store that is not there. */
export interface OpenStoreOptions extends StoreOptions {
  /**
   * Create (and migrate) the store where it is not there yet; default true. False opens only a
   * store that exists, changing nothing: a missing one is NOT_FOUND, one at an older schema
   * version SCHEMA.
   */
  create?: boolean;
}

/** Options of `CheckpointStore.checkpoint`, whose transcript items are of type `I`. */
export interface CheckpointOptions<I = JsonValue> {
  metadata?: Metadata;
  /** Items appended to the session's transcript with this checkpoint. */
  transcript?: readonly JsonCompatible<I>[];
  /** Optimistic concurrency: the head the caller saw; null means the session must not exist yet. */
  expectedHead?: number | null;
  /** A retry with the same key returns the first result and writes nothing. */
  idempotencyKey?: string;
  /**
   * Seqs of earlier checkpoints of the same session that this one refers to (at most 1,000),
   * so that `prune` keeps them as long as it keeps this one, and `fork` copies them with it.
   * Those that are not stored when the checkpoint is written are left out.
   */
  needs?: number[];
  /**
   * The session's tags from this checkpoint on, replacing those it had (`{}` removes them all);
   * omitted, they stay as they are. At most 16; see "Tags" in core's README.
   */
  tags?: Record<string, string>;
}

/** A page of `CheckpointStore.sessions`, optionally only the sessions whose id starts with `prefix`. */
export interface SessionsOptions extends PageOptions {
  /** Only sessions whose id starts with it (`''`, the default: every session). */
  prefix?: string;
  /** Only sessions that have every one of these tags, such as `{ user: 'ann', status: 'open' }`. */
  where?: Record<string, string>;
  /** The same as `cursor`: the cursor of the page before. */
  after?: string | null;
}

/** Options of `CheckpointStore.update`, whose transcript items are of type `I`. */
export interface UpdateOptions<I = JsonValue> {
  metadata?: Metadata;
  /** Items appended to the session's transcript with the checkpoint written. */
  transcript?: readonly JsonCompatible<I>[];
  /** How many times to try before giving up with CONFLICT. Default 10. */
  maxAttempts?: number;
  /** The session's tags from the checkpoint written on, as `CheckpointOptions.tags`. */
  tags?: Record<string, string>;
}

/** A small JSON key-value space beside the checkpoints, whose values are of type `V`. */
export interface StateScope<V = JsonValue> {
  /** The value of `key`, or undefined when it has none. */
  get(key: string): Promise<V | undefined>;
  /** Store `value` under `key`. */
  set<W = V>(key: string, value: JsonInput<V, W>): Promise<void>;
  /** Write `value` only where `key` has none (atomically); true when written, false when a value was there and is kept. */
  setIfAbsent<W = V>(key: string, value: JsonInput<V, W>): Promise<boolean>;
  /** False when the key was absent. */
  delete(key: string): Promise<boolean>;
  /** Keys in ascending order (by UTF-8 bytes). */
  keys(page?: PageOptions & { prefix?: string }): Promise<Page<string>>;
  /** Read-modify-write without lost updates; returns the value written. */
  update(key: string, fn: (current: V | undefined) => JsonCompatible<V>): Promise<V>;
}

/** A checkpoint whole, with the transcript items it appended: one entry of an export. */
export interface ExportedCheckpoint {
  seq: number;
  parent: number | null;
  data: JsonValue;
  metadata: Metadata;
  /** The items this checkpoint appended to the transcript (`[]` when none). */
  transcript: JsonValue[];
  createdAt: Date;
  /** The seqs of the earlier checkpoints it needs, ascending (omitted when none). */
  needs?: number[];
  /** Whether it is pinned (omitted when not). */
  pinned?: boolean;
  /** The note of its pin (omitted when not pinned, or pinned without one). */
  pinNote?: string | null;
}

/** A whole session as `importSession` takes it. */
export interface SessionImport {
  sessionId: string;
  head: number;
  forkedFrom: { sessionId: string; seq: number } | null;
  createdAt: Date;
  updatedAt: Date;
  /** Its tags (omitted or `{}`: none). */
  tags?: Record<string, string>;
  /** Every stored checkpoint, on every branch (any order; each seq once). */
  checkpoints: Iterable<ExportedCheckpoint> | AsyncIterable<ExportedCheckpoint>;
}

/** A session exactly as stored, as `exportSession` gives it: its checkpoints are read as they are iterated. */
export interface SessionExport extends SessionImport {
  /** How many checkpoints `checkpoints` gives. */
  count: number;
  /** Its tags (`{}` when none). */
  tags: Record<string, string>;
  /** Every stored checkpoint, on every branch, seq ascending, read a page at a time. */
  checkpoints: AsyncIterable<ExportedCheckpoint>;
}

/** Options of `CheckpointStore.importSession`. */
export interface ImportOptions {
  /**
   * When the store has a session with the same id: `'fail'` (the default) refuses with
   * CONFLICT, `'skip'` leaves it and imports nothing, `'replace'` overwrites it whole.
   */
  ifExists?: 'fail' | 'skip' | 'replace';
}
