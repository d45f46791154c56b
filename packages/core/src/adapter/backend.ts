/**
 * The native backend contract. A backend stores and fetches; the `CheckpointStore` facade
 * validates input, encodes values, enforces limits and builds cursors before calling it,
 * so every argument a backend receives is already valid. Each method is one atomic
 * operation: it either happens completely or not at all.
 */

import type { Tags } from '../values/tags.js';

export type { Tags };

/**
 * What a store on a backend can do beyond the required methods: the listings follow from the
 * methods the backend has (see completeBackend); `concurrentWriters` it declares.
 */
export interface BackendCapabilities {
  /** Every guarantee holds with several writers on one session at once, across connections. */
  concurrentWriters: boolean;
  /** The backend has `sessions()`; without it the store raises UNSUPPORTED. */
  listSessions: boolean;
  /** The backend has `stateKeys()` and `stateScopes()`; without them the store raises UNSUPPORTED. */
  listStateKeys: boolean;
  /** The backend has `changes()`, its change log; without it `watch()` raises UNSUPPORTED. */
  watch: boolean;
  /**
   * The backend has `setTags()`: it keeps sessions' tags, and its `sessions()` takes `where`.
   * Without it, a tag given to the store raises UNSUPPORTED, before anything is written.
   */
  tags: boolean;
}

/**
 * What a backend declares of itself: `concurrentWriters`, which no method shows (default
 * false: the contract suite then skips its concurrency cases). The listings, where given, say
 * what its methods show; core takes them from the methods.
 */
export type BackendDeclarations = Partial<BackendCapabilities>;

/**
 * A stored checkpoint. Values are text exactly as the facade encoded them: JSON text, or for
 * data the text the store's codecs made of it.
 */
export interface StoredCheckpoint {
  seq: number;
  parent: number | null;
  /** JSON text of the data. */
  data: string;
  /** JSON text of the metadata object. */
  metadata: string;
  /** Milliseconds since the epoch. */
  createdAt: number;
  /** Whether the checkpoint is pinned (`pin`): no prune, sweep or retention removes it. */
  pinned: boolean;
  /** The note given to `pin`, when pinned with one; else null. */
  pinNote: string | null;
}

/** A stored checkpoint without its data. */
export type StoredCheckpointInfo = Omit<StoredCheckpoint, 'data'>;

/** One step of a lineage walk: a checkpoint's place in the timeline and its transcript items. */
export interface StoredLineageEntry {
  seq: number;
  parent: number | null;
  createdAt: number;
  /** JSON text of the checkpoint's transcript items (an array); only when asked for. */
  transcript?: string;
}

/** A stored session. */
export interface StoredSession {
  sessionId: string;
  head: number;
  /** How many checkpoints are stored now. */
  checkpoints: number;
  forkedFrom: { sessionId: string; seq: number } | null;
  /** JSON text of the head checkpoint's metadata. */
  metadata: string;
  createdAt: number;
  updatedAt: number;
  /** The session's tags (see Tags); absent or empty when it has none. */
  tags?: Tags;
}

/** The position just past an item of the session catalog, ordered by updatedAt then id, both descending. */
export interface SessionPosition {
  updatedAt: number;
  sessionId: string;
}

/** What `append` writes. */
export interface AppendInput {
  sessionId: string;
  data: string;
  metadata: string;
  /** JSON text of an array of transcript items (`[]` when none). */
  transcript: string;
  /** undefined: any head; null: the session must not exist yet; a number: the head must be it. */
  expectedHead: number | null | undefined;
  /** When set, a checkpoint already written with this key is returned instead of writing. */
  idempotencyKey: string | undefined;
  /** The time to record, in milliseconds since the epoch. */
  now: number;
  /**
   * Seqs of earlier checkpoints of the session that this one needs: ascending, each once,
   * positive (`[]` when none, the common case). The backend records, in the same atomic step
   * as the write, those that are stored at that moment, and drops the others.
   */
  needs: number[];
  /**
   * Optional: the session's tags from this checkpoint on, replacing those it had (`{}`: none),
   * in the same atomic step as the write, and only if it is written (not on a replay or a
   * conflict); undefined leaves them as they are. Never given to a backend without `setTags`.
   */
  tags?: Tags;
}

/** How `append` ended. */
export type AppendResult =
  | { status: 'written'; seq: number; parent: number | null }
  /** The idempotency key was used before, for `seq`; `checkpoint` is null when it was pruned since. */
  | { status: 'replayed'; seq: number; checkpoint: StoredCheckpoint | null }
  | { status: 'conflict'; head: number | null };

/** What `rollback` changes. */
export interface RollbackInput {
  sessionId: string;
  seq: number;
  expectedHead: number | undefined;
  now: number;
}

/** How `rollback` ended. */
export type RollbackResult =
  | { status: 'done' }
  | { status: 'conflict'; head: number | null }
  | { status: 'not_found'; missing: 'session' | 'seq' };

/** What `fork` copies. */
export interface ForkInput {
  sessionId: string;
  /** null: the source's head. */
  atSeq: number | null;
  newId: string;
  now: number;
}

/** How `fork` ended. */
export type ForkResult =
  | { status: 'done'; seq: number }
  | { status: 'exists' }
  | { status: 'not_found'; missing: 'session' | 'seq' };

/** A stored checkpoint whole, as an export reads it: its data, metadata and transcript items. */
export interface ExportedStoredCheckpoint extends StoredCheckpoint {
  /** JSON text of the checkpoint's transcript items (an array, `[]` when none). */
  transcript: string;
  /** The seqs of the stored checkpoints it needs, ascending, each once (`[]` when none). */
  needs: number[];
}

/**
 * Which checkpoints a prune lets go: a checkpoint goes only when every rule given lets it go
 * (it is not among the `keepLast` highest seqs, and it was created before `createdBefore`).
 * At least one of the two is not null.
 */
export interface PruneRule {
  /** Keep the checkpoints with the `keepLast` highest seqs (a positive integer), or null. */
  keepLast: number | null;
  /** Keep the checkpoints created at or after this time (ms since the epoch), or null. */
  createdBefore: number | null;
}

/** How `pin` ended. */
export type PinResult = { status: 'done' } | { status: 'not_found'; missing: 'session' | 'seq' };

/** What `deleteIdle` decided for one session. */
export type DeleteIdleResult =
  /** Deleted (or with `dryRun`, would be): it held `checkpoints` checkpoints. */
  | { status: 'deleted'; checkpoints: number }
  /** Left as it is: written since `idleBefore`, holding a pin, or not stored. */
  | { status: 'kept' };

/** What `rewriteCheckpoint` changes: a stored checkpoint's data and transcript text. */
export interface RewriteInput {
  sessionId: string;
  seq: number;
  /** The texts it must still hold; otherwise nothing is written. */
  from: { data: string; transcript: string };
  /** The new texts; `to.transcript` is `[]` (no items) exactly when `from.transcript` is. */
  to: { data: string; transcript: string };
}

/** A whole session for `importSession`, every value already checked and encoded. */
export interface ImportInput {
  sessionId: string;
  head: number;
  forkedFrom: { sessionId: string; seq: number } | null;
  createdAt: number;
  updatedAt: number;
  /**
   * Every checkpoint, seq ascending, each seq once; the head among them; at least one. Each
   * one's `needs` names only seqs below its own that are among them.
   */
  checkpoints: ExportedStoredCheckpoint[];
  /** Replace a session of the same id (its checkpoints, transcript and keys); else leave it. */
  replace: boolean;
  /**
   * Optional: its tags (`{}` or undefined: none). Never given with a tag to a backend without
   * `setTags`.
   */
  tags?: Tags;
}

/** One finding of a backend's `diagnose()`, as `ckpt doctor` shows it. */
export interface Diagnosis {
  /** What was checked, such as `schema` or `durability`. */
  check: string;
  status: 'ok' | 'warn' | 'fail';
  /** What was found. */
  detail: string;
  /** What to do about it, where it is not ok. */
  fix?: string;
}

/**
 * The checkpoint log: a session's checkpoints, its head and its catalog entry, written by
 * append, rollback, fork, prune and delete, and read by the facade's every checkpoint method.
 */
export interface CheckpointLog {
  /**
   * Atomically: return the earlier checkpoint for `idempotencyKey` if there is one; else check
   * `expectedHead`; else write seq = highest seq + 1 with parent = head, move the head to it, and
   * record `idempotencyKey`. Creates the session when it does not exist.
   */
  append(input: AppendInput): Promise<AppendResult>;
  /** One checkpoint (`seq` null: the head), or null when not stored. */
  load(sessionId: string, seq: number | null): Promise<StoredCheckpoint | null>;
  /**
   * The stored checkpoint that `append` wrote with `idempotencyKey` in this session, or null
   * (never written with it, pruned since, or the session deleted since).
   */
  loadByKey(sessionId: string, idempotencyKey: string): Promise<StoredCheckpoint | null>;
  /** The session's summary, or null when it does not exist. */
  session(sessionId: string): Promise<StoredSession | null>;
  /**
   * Optional: stored checkpoints with seq below `beforeSeq` (null: all), seq descending, at most
   * `limit`. Without it, core reads them from `exportCheckpoints`, the whole session a page at
   * a time.
   */
  listCheckpoints?(
    sessionId: string,
    query: { beforeSeq: number | null; limit: number },
  ): Promise<StoredCheckpointInfo[]>;
  /**
   * Optional: `fromSeq` (null: the head) and its stored ancestors, following `parent`, newest
   * first, at most `limit`; the walk stops at the first parent that is not stored. Without it,
   * core walks `load()` (and `exportCheckpoints` for each transcript), a call a step.
   */
  lineage?(
    sessionId: string,
    query: { fromSeq: number | null; limit: number; transcript: boolean },
  ): Promise<StoredLineageEntry[]>;
  /** Move the head to a stored checkpoint and set updatedAt. */
  rollback(input: RollbackInput): Promise<RollbackResult>;
  /**
   * Optional: create `newId` holding `atSeq`, its stored ancestors and, transitively, every
   * checkpoint those need (each with its needs, none pinned), head at `atSeq`, with the source's
   * tags (where the backend keeps tags). Without it, core
   * reads the session with `exportCheckpoints` and writes the fork with `importSession`.
   */
  fork?(input: ForkInput): Promise<ForkResult>;
  /**
   * Remove the checkpoints `rule` lets go, except the head, pinned checkpoints, and every
   * checkpoint a kept one needs, directly or through one another; return how many were removed
   * (with `dryRun`: how many would be, removing nothing). What is kept is decided in the same
   * atomic step as the removal, so that a checkpoint appended meanwhile never loses what it
   * needs. 0 for a session that does not exist. Never changes the session's updatedAt.
   */
  prune(sessionId: string, rule: PruneRule, dryRun?: boolean): Promise<number>;
  /** Remove the session entirely; false when it did not exist. */
  delete(sessionId: string): Promise<boolean>;
  /**
   * Optional: sessions whose id starts with `prefix` (`''`: every session), after `after` (null:
   * from the start), updatedAt then id descending, at most `limit`. A prefix is served by an
   * index on the ids, not by reading every session. Without it, the store cannot list sessions
   * (capability `listSessions`).
   */
  sessions?(query: {
    after: SessionPosition | null;
    limit: number;
    prefix: string;
    /**
     * Only the sessions that have every one of these tags (absent or `{}`: no filter; never a
     * tag on a backend without `setTags`). Served by an index of the tags that yields the
     * sessions in the listing's order, so that a page costs the same however many sessions the
     * store holds, not by reading sessions that do not match. The pairs come in the order the
     * caller gave them: walk the index of the first (the caller is asked to name the rarest
     * first) and check the others.
     */
    where?: Tags;
  }): Promise<StoredSession[]>;
  /**
   * Optional: replace the session's tags with `tags` (`{}`: none), in one atomic step; false
   * (writing nothing) when the session does not exist. Changes nothing else (not updatedAt).
   * With it, the backend keeps tags (capability `tags`): `append`, `importSession`, `fork` and
   * `sessions()` take and give them, and `delete` removes them.
   */
  setTags?(sessionId: string, tags: Tags): Promise<boolean>;
}

/** The state store: small JSON text values in scopes, beside the checkpoints (`store.state()`). */
export interface StateStore {
  /** A state value's JSON text, or undefined. */
  stateGet(scope: string, key: string): Promise<string | undefined>;
  stateSet(scope: string, key: string, value: string): Promise<void>;
  stateDelete(scope: string, key: string): Promise<boolean>;
  /** Write `value` only if the current text is `expected` (null: absent); true when written. */
  stateCompareAndSet(
    scope: string,
    key: string,
    expected: string | null,
    value: string,
  ): Promise<boolean>;
  /**
   * Optional, with stateScopes: keys of `scope` starting with `prefix`, after `after`, ascending
   * by UTF-8 bytes, at most `limit`. Without both, the store cannot list state (capability
   * `listStateKeys`).
   */
  stateKeys?(
    scope: string,
    query: { prefix: string; after: string | null; limit: number },
  ): Promise<string[]>;

  /**
   * Optional, with stateKeys: scopes that hold at least one state key, after `after`, ascending
   * by UTF-8 bytes, at most `limit`.
   */
  stateScopes?(query: { after: string | null; limit: number }): Promise<string[]>;
}

/** Session transfer: a whole session out, a page of checkpoints at a time, and in, at once. */
export interface SessionTransfer {
  /**
   * Stored checkpoints of the session with seq above `afterSeq` (null: from the first), seq
   * ascending, whole (with their needs), at most `limit`: the pages of an export.
   */
  exportCheckpoints(
    sessionId: string,
    query: { afterSeq: number | null; limit: number },
  ): Promise<ExportedStoredCheckpoint[]>;
  /**
   * Atomically store a whole session as given: every checkpoint with its seq, parent, data,
   * metadata, transcript, needs and time, the head, forkedFrom and both times, so that every read
   * answers as it did where the session was exported. Its next seq is one above its highest.
   * `exists` (writing nothing) when the id is taken and `replace` is false; with `replace`,
   * what the id held before is gone. The session keeps no idempotency keys.
   */
  importSession(input: ImportInput): Promise<'imported' | 'exists'>;
  /**
   * Optional: atomically replace the data and transcript text of stored checkpoint `seq` with
   * `to`, only while they are still `from`; false (writing nothing) when they are not, or the
   * checkpoint is not stored. Nothing else changes: not its seq, parent, metadata, time or
   * needs, nor the session's head, times or keys. `reencode()` rewrites values with it beside
   * live writers; without it, `reencode()` is UNSUPPORTED.
   */
  rewriteCheckpoint?(input: RewriteInput): Promise<boolean>;
}

/**
 * Retention: pins, and the atomic decisions `sweep` is built from. A decision about a session
 * is made in the same atomic step as what it removes, so a writer that lands meanwhile wins.
 */
export interface Retention {
  /**
   * Pin stored checkpoint `seq` with `note` (null: none); pinning a pinned one replaces its
   * note. Changes nothing else (not the session's updatedAt).
   */
  pin(input: { sessionId: string; seq: number; note: string | null }): Promise<PinResult>;
  /** Unpin checkpoint `seq`; false when it was not pinned (or not stored). */
  unpin(sessionId: string, seq: number): Promise<boolean>;
  /**
   * Atomically: delete the session only if its updatedAt is before `idleBefore` (ms since the
   * epoch) and none of its checkpoints is pinned. With `dryRun`, only say what it would do.
   */
  deleteIdle(sessionId: string, idleBefore: number, dryRun: boolean): Promise<DeleteIdleResult>;
  /**
   * Optional native help for sweeps: delete, in one step, up to `limit` sessions whose
   * updatedAt is before `idleBefore` and that hold no pin, each decided atomically as
   * `deleteIdle` does; return how many sessions and checkpoints went (0 sessions: none is
   * left). Without it, a sweep lists sessions and calls `deleteIdle` on each.
   */
  deleteIdleBatch?(query: {
    idleBefore: number;
    limit: number;
  }): Promise<{ sessions: number; checkpoints: number }>;
  /**
   * Optional native help for sweeps: prune each of `sessionIds` as `prune` does, in one step
   * (one statement or transaction, one commit), each session decided atomically; return how
   * many checkpoints went in all (with `dryRun`, would go). An id without a session counts 0.
   * Without it, a sweep calls `prune` on each session.
   */
  pruneBatch?(sessionIds: readonly string[], rule: PruneRule, dryRun: boolean): Promise<number>;
}

/** What a change did: the kinds of `ChangeEvent`. */
export type ChangeKind = 'checkpoint' | 'rollback' | 'fork' | 'delete' | 'prune' | 'state';

/** One committed change, as the change log holds it. */
export interface StoredChange {
  /**
   * Where the change is in the log. Positions sort as strings in the order of the log (fixed
   * width), so that core can tell which of two comes first; the backend makes and reads them.
   */
  position: string;
  /** The session that changed; for a state value, its scope. */
  sessionId: string;
  kind: ChangeKind;
  /** The session's head after the change; null after a delete and for a state value. */
  seq: number | null;
}

/** A page of the change log, and where to read on from. */
export interface ChangesPage {
  changes: StoredChange[];
  /** The position after this page: the last change's, or further where the log knows more. */
  position: string;
}

/**
 * The change log, which `watch()` follows: each change (a checkpoint, rollback, fork, delete,
 * prune, state value set or deleted) recorded with the write that made it, from every process
 * writing to the store, and kept for a while (how long, the backend's README says).
 */
export interface ChangeLog {
  /**
   * Optional: the changes after `after`, in an order that a reader taking page after page never
   * misses one, at most `limit`; with `after` null, none, and the position of the log's end now.
   * 'expired' when the log no longer holds what followed `after`. A position the backend did not
   * make is refused with INVALID_ARGUMENT (argument `since`). Without it, `watch()` is
   * UNSUPPORTED.
   */
  changes?(query: { after: string | null; limit: number }): Promise<ChangesPage | 'expired'>;
  /**
   * Optional, with `changes`: call `wake` soon after a change commits, from any process (and
   * once more after a connection it listens on was cut and made again), so that watchers read
   * at once instead of at their next poll. Resolves, once listening, to what stops it.
   */
  onChanges?(wake: () => void): Promise<() => Promise<void>>;
  /**
   * Optional: how often, in milliseconds, watchers read the log when nothing woke them (default:
   * 100 without `onChanges`, 2,000 with it, a guard against a lost wake).
   */
  readonly changesPollMs?: number;
}

/** Lifecycle: what the backend is and can do, opening, closing, removing and checking it. */
export interface BackendLifecycle {
  /** A short name for messages and test titles, e.g. `sqlite`. */
  readonly name: string;
  /** Optional: what it declares of itself (see BackendDeclarations). */
  readonly capabilities?: BackendDeclarations;

  /** Release connections the backend opened itself (never a client it was given). */
  close(): Promise<void>;

  /**
   * Optional: resolves once the backend can serve calls (its namespace found, or created and
   * migrated); rejects with what keeps it from opening, such as NOT_FOUND for a store that
   * `create: false` did not find, or SCHEMA. Until then the backend holds its calls back (and
   * then fails them with the same error; `afterReady` in the adapter kit does that for a
   * backend). `openStore(url, { create: false })` awaits it, so that a missing store fails there.
   */
  ready?(): Promise<void>;

  /**
   * Optional: remove everything the backend holds in its namespace (every session, state value
   * and key, and the tables, routines and records it made for them), leaving every other
   * namespace on the same storage as it was. `CheckpointStore.destroy()` calls it once no
   * call of the store is in flight, then closes the backend; without it, that is UNSUPPORTED.
   */
  destroy?(): Promise<void>;

  /**
   * Optional: checks of the deployment for `ckpt doctor`: the schema version, durability
   * settings, file modes, privileges, each with what to do about a problem.
   */
  diagnose?(): Promise<Diagnosis[]>;

  /**
   * Optional: called by each store made on this backend whose codecs encrypt, as it is made: from
   * then on the backend keeps what it deletes or replaces from lingering in its storage where it
   * can (SQLite overwrites it: secure_delete), and `diagnose()` checks what may linger from before.
   */
  onEncryptedValues?(): void;

  /**
   * Optional: what stays of the values a rewrite or a delete replaced, in the backend's storage,
   * for a person who has just encrypted or rekeyed a store.
   */
  leftovers?(): Leftovers;

  /**
   * Optional: what to do about a failure its driver or server raised (such as a refused login),
   * for the message of the BACKEND error the store makes of it; undefined when there is nothing
   * to say. The store knows Node's own connection errors; only the backend knows its server's.
   */
  errorHint?(err: unknown): string | undefined;
}

/**
 * What stays of replaced values in a backend's storage (free pages, dead row versions, logs,
 * snapshot files) until something removes it.
 */
export interface Leftovers {
  /** Where replaced values remain, and what removes them: sentences for a person. */
  readonly remain: string;
  /**
   * Where the backend can: rewrite its storage so that no replaced value remains in it (SQLite:
   * VACUUM), and say what was done, in a sentence.
   */
  reclaim?(): Promise<string>;
}

/**
 * The storage behind a `CheckpointStore`: one method per atomic operation, in six roles (the
 * checkpoint log, the state store, session transfer, retention, the change log and lifecycle). Required: only
 * what core cannot derive; core builds what a backend leaves out of the rest from the
 * methods it has (see completeBackend).
 */
export interface CheckpointBackend
  extends CheckpointLog,
    StateStore,
    SessionTransfer,
    Retention,
    ChangeLog,
    BackendLifecycle {}

/** The methods core derives for a backend that leaves them out. */
export type DerivedMethod = 'listCheckpoints' | 'lineage' | 'fork';
/** The listings (and tags) a backend may leave out, which its capabilities then say it lacks. */
export type ListingMethod = 'sessions' | 'stateKeys' | 'stateScopes' | 'setTags';

/**
 * A backend as the store calls it (see completeBackend): every method there, those it left out
 * derived, the listings it lacks refusing with UNSUPPORTED, and its capabilities as its methods
 * show them.
 */
export type CompleteBackend = Omit<
  CheckpointBackend,
  DerivedMethod | ListingMethod | 'capabilities'
> &
  Required<Pick<CheckpointBackend, DerivedMethod | ListingMethod>> & {
    readonly capabilities: BackendCapabilities;
  };
