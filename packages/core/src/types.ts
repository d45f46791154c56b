/** A value JSON can carry exactly. */
export type JsonValue =
  | null
  | boolean
  | number
  | string
  | JsonValue[]
  | { [key: string]: JsonValue };

/** Free-form facts about a checkpoint (a JSON object). */
export type Metadata = { [key: string]: JsonValue };

/** One saved step of a session. */
export interface Checkpoint {
  sessionId: string;
  /** 1, 2, 3, … within the session; never reused while the session exists. */
  seq: number;
  /** The session's head when this checkpoint was written. */
  parent: number | null;
  /** Exactly what was saved, key order kept. */
  data: JsonValue;
  metadata: Metadata;
  /** Millisecond precision. */
  createdAt: Date;
}

/** A checkpoint without its data, as `list` returns it. */
export type CheckpointInfo = Omit<Checkpoint, 'data'>;

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
  /** Largest encoded size of one checkpoint (data + metadata + transcript items). Default 8 MiB. */
  maxPayloadBytes?: number;
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

/** Options of `CheckpointStore.checkpoint`. */
export interface CheckpointOptions {
  metadata?: Metadata;
  /** Items appended to the session's transcript with this checkpoint. */
  transcript?: JsonValue[];
  /** Optimistic concurrency: the head the caller saw; null means the session must not exist yet. */
  expectedHead?: number | null;
  /** A retry with the same key returns the first result and writes nothing. */
  idempotencyKey?: string;
}

/** Options of `CheckpointStore.update`. */
export interface UpdateOptions {
  metadata?: Metadata;
  transcript?: JsonValue[];
  /** How many times to try before giving up with CONFLICT. Default 10. */
  maxAttempts?: number;
}

/** A small JSON key-value space beside the checkpoints. */
export interface StateScope {
  get(key: string): Promise<JsonValue | undefined>;
  set(key: string, value: JsonValue): Promise<void>;
  /** Write `value` only where `key` has none (atomically); true when written, false when a value was there and is kept. */
  setIfAbsent(key: string, value: JsonValue): Promise<boolean>;
  /** False when the key was absent. */
  delete(key: string): Promise<boolean>;
  /** Keys in ascending order (by UTF-8 bytes). */
  keys(page?: PageOptions & { prefix?: string }): Promise<Page<string>>;
  /** Read-modify-write without lost updates; returns the value written. */
  update(key: string, fn: (current: JsonValue | undefined) => JsonValue): Promise<JsonValue>;
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
}

/** A whole session as `importSession` takes it. */
export interface SessionImport {
  sessionId: string;
  head: number;
  forkedFrom: { sessionId: string; seq: number } | null;
  createdAt: Date;
  updatedAt: Date;
  /** Every stored checkpoint, on every branch (any order; each seq once). */
  checkpoints: Iterable<ExportedCheckpoint> | AsyncIterable<ExportedCheckpoint>;
}

/** A session exactly as stored, as `exportSession` gives it: its checkpoints are read as they are iterated. */
export interface SessionExport extends SessionImport {
  /** How many checkpoints `checkpoints` gives. */
  count: number;
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
