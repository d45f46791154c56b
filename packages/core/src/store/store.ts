/**
 * The `CheckpointStore` facade: every public method validates its input, encodes values,
 * enforces the limits, builds cursors and turns backend outcomes into results or errors.
 * Backends only store and fetch.
 */
import type {
  BackendCapabilities,
  CheckpointBackend,
  CompleteBackend,
  Diagnosis,
  PruneRule,
  SessionPosition,
  StoredCheckpoint,
  StoredSession,
  Tags,
} from '../adapter/backend.js';
import { completeBackend } from '../adapter/complete-backend.js';
import { checkNeeds } from '../adapter/needs.js';
import { CodecChain } from '../codecs/chain.js';
import {
  checkCheckpointSize,
  decodeMetadata,
  encodeJson,
  encodeMetadata,
  encodeTranscript,
} from '../values/encode.js';
import {
  CkptError,
  type ErrorHint,
  invalidArgument,
  isCkptError,
  toCkptError,
  unsupported,
} from '../values/errors.js';
import type { JsonCompatible, JsonInput, JsonValue } from '../values/json.js';
import { checkTags } from '../values/tags.js';
import {
  checkExpectedHead,
  checkName,
  checkOptions,
  checkPositiveInteger,
} from '../values/validate.js';
import { ChangeTail } from './change-tail.js';
import { listPosition, sessionPosition, transcriptPosition } from './cursor-positions.js';
import { decodeCheckpoint } from './decode.js';
import { type CursorOwner, encodeCursor, readPage, toPage } from './paging.js';
import { type ReencodeOptions, type ReencodeResult, reencode } from './reencode.js';
import {
  checkPruneOptions,
  checkRetention,
  type PruneOptions,
  type SweepOptions,
  type SweepResult,
  sweep,
} from './retention.js';
import { exportSession, importSession } from './session-transfer.js';
import { SessionValues, sealCheckpointValue } from './session-values.js';
import { createStateScope } from './state.js';
import { walkTranscript } from './transcript-walk.js';
import type {
  Checkpoint,
  CheckpointInfo,
  CheckpointOptions,
  ImportOptions,
  ListOptions,
  Page,
  PageOptions,
  SessionExport,
  SessionImport,
  SessionInfo,
  SessionsOptions,
  StateScope,
  StoreOptions,
  TranscriptEntry,
  UpdateOptions,
} from './types.js';
import { type ChangeStream, type WatchOptions, watchChanges } from './watch.js';

/** The default largest encoded checkpoint: 8 MiB. */
export const DEFAULT_MAX_PAYLOAD_BYTES = 8 * 1024 * 1024;
const DEFAULT_UPDATE_ATTEMPTS = 10;

/**
 * Durable, versioned checkpoints of agent sessions on any `CheckpointBackend`. `T` is the type
 * of its checkpoints' data, for TypeScript only: `load()` returns `Checkpoint<T>` and
 * `checkpoint()` takes a `T`. Left as `JsonValue`, `checkpoint()` takes any JSON-compatible
 * value and each call can name its own type (`load<MyState>(id)`). Every value is checked at
 * run time whatever the type says.
 */
export class CheckpointStore<T = JsonValue> {
  /** The backend given, as the store calls it (see completeBackend). */
  readonly #backend: CompleteBackend;
  readonly #given: CheckpointBackend;
  readonly #errorHint: ErrorHint | undefined;
  readonly #maxPayloadBytes: number;
  readonly #codecs: CodecChain;
  readonly #retention: ((seq: number, now: number) => PruneRule | null) | undefined;
  #closed = false;
  #closing: Promise<void> | undefined;
  /** The one reader of the change log that every watcher of this store takes changes from. */
  readonly #tail: ChangeTail;
  /**
   * How many calls have started and not yet settled, which close() waits for. A count, not a
   * set of the calls' promises: a promise held in a long-lived set keeps its result (a whole
   * decoded checkpoint) reachable, so each minor GC while it is there copies that result and
   * then promotes it, which with many large loads in flight costs more than the loads.
   */
  #running = 0;
  /** Set by close() while it waits: called when the last running call settles. */
  #settled: (() => void) | undefined;

  constructor(backend: CheckpointBackend, options: StoreOptions = {}) {
    if (!backend || typeof backend.append !== 'function') {
      throw invalidArgument(
        'backend',
        'new CheckpointStore(backend) needs a backend, such as memory() from @ckpt/memory or kvBackend(kv).',
      );
    }
    const opts = checkOptions(
      options,
      'options',
      ['maxPayloadBytes', 'codecs', 'retention'],
      'new CheckpointStore()',
    );
    this.#given = backend;
    this.#backend = completeBackend(backend);
    this.#errorHint = backend.errorHint?.bind(backend);
    this.#maxPayloadBytes =
      opts.maxPayloadBytes === undefined
        ? DEFAULT_MAX_PAYLOAD_BYTES
        : checkPositiveInteger(opts.maxPayloadBytes, 'maxPayloadBytes');
    this.#codecs = new CodecChain(opts.codecs ?? []);
    this.#retention = checkRetention(opts.retention);
    this.#tail = new ChangeTail(this.#backend);
    if (this.#codecs.encrypts) backend.onEncryptedValues?.();
  }

  /** The backend this store runs on, as it was given. */
  get backend(): CheckpointBackend {
    return this.#given;
  }

  /** The backend's name, for messages: `sqlite`, `postgres`, … */
  get backendName(): string {
    return this.#backend.name;
  }

  /**
   * What the backend can do beyond the required methods: whether `sessions()` and
   * `state().keys()` work, and whether every guarantee holds with several writers.
   */
  get capabilities(): BackendCapabilities {
    return this.#backend.capabilities;
  }

  /**
   * The backend's checks of its deployment (schema version, durability settings, file modes,
   * privileges), each with what to do about a problem; [] for a backend that has none.
   */
  async diagnose(): Promise<Diagnosis[]> {
    return this.#run(async () => (await this.#backend.diagnose?.()) ?? []);
  }

  /** Save `data` as the session's next checkpoint and move the head to it. */
  async checkpoint<D = T, I = JsonValue>(
    sessionId: string,
    data: JsonInput<T, D>,
    options?: CheckpointOptions<I>,
  ): Promise<Checkpoint<D>> {
    return this.#checkpoint(sessionId, data, options) as Promise<Checkpoint<D>>;
  }

  async #checkpoint(
    sessionId: string,
    data: unknown,
    options: CheckedOptions | undefined,
  ): Promise<Checkpoint<JsonValue>> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      const opts = checkOptions(
        options,
        'options',
        ['metadata', 'transcript', 'expectedHead', 'idempotencyKey', 'needs', 'tags'],
        'checkpoint()',
      );
      const expectedHead = checkExpectedHead(opts.expectedHead, true);
      const idempotencyKey =
        opts.idempotencyKey === undefined
          ? undefined
          : checkName(opts.idempotencyKey, 'idempotencyKey');
      const encoded = encodeJson(data, 'data');
      const metadata = encodeMetadata(opts.metadata, 'metadata');
      const transcript = encodeTranscript(opts.transcript, 'transcript');
      const needs = checkNeeds(opts.needs, 'needs');
      const tags = opts.tags === undefined ? undefined : this.#checkedTags(opts.tags, 'tags');
      checkCheckpointSize(
        'checkpoint',
        encoded.text,
        metadata.text,
        transcript.text,
        this.#maxPayloadBytes,
      );

      const now = Date.now();
      const result = await this.#backend.append({
        sessionId,
        data: sealCheckpointValue(this.#codecs, sessionId, 'data', encoded.text),
        metadata: metadata.text,
        transcript: sealCheckpointValue(this.#codecs, sessionId, 'transcript', transcript.text),
        expectedHead,
        idempotencyKey,
        now,
        needs,
        ...(tags ? { tags } : {}),
      });
      switch (result.status) {
        case 'written':
          await this.#retain(sessionId, result.seq, now);
          // The checked copies are what was stored; decoding the text again would give the same.
          return {
            sessionId,
            seq: result.seq,
            parent: result.parent,
            data: encoded.value,
            metadata: metadata.value,
            createdAt: new Date(now),
          };
        case 'replayed':
          if (result.checkpoint === null) {
            throw new CkptError(
              'CONFLICT',
              `idempotencyKey ${JSON.stringify(idempotencyKey)} already wrote checkpoint ${result.seq} of session ${JSON.stringify(sessionId)}, which has since been pruned; nothing was written.`,
              { details: { argument: 'idempotencyKey', seq: result.seq } },
            );
          }
          return this.#toCheckpoint(sessionId, result.checkpoint);
        case 'conflict':
          throw headConflict(sessionId, expectedHead ?? null, result.head);
      }
    });
  }

  /**
   * Read-modify-write without lost updates: load the head, apply `fn` to it (the head
   * `Checkpoint`, or null for a session not stored yet; not its data), save what `fn` returns
   * with expectedHead, retry on CONFLICT.
   */
  async update<D = T, I = JsonValue>(
    sessionId: string,
    fn: (current: Checkpoint<D> | null) => UpdatedData<D> | Promise<UpdatedData<D>>,
    options?: UpdateOptions<I>,
  ): Promise<Checkpoint<D>> {
    checkName(sessionId, 'sessionId');
    if (typeof fn !== 'function') throw invalidArgument('fn', 'update() needs a function.');
    const opts = checkOptions(
      options,
      'options',
      ['metadata', 'transcript', 'maxAttempts', 'tags'],
      'update()',
    );
    const maxAttempts =
      opts.maxAttempts === undefined
        ? DEFAULT_UPDATE_ATTEMPTS
        : checkPositiveInteger(opts.maxAttempts, 'maxAttempts');
    for (let attempt = 1; ; attempt++) {
      const current = await this.load<D>(sessionId);
      const next = await fn(current);
      try {
        return (await this.#checkpoint(sessionId, next, {
          metadata: opts.metadata,
          transcript: opts.transcript,
          tags: opts.tags,
          expectedHead: current === null ? null : current.seq,
        })) as Checkpoint<D>;
      } catch (err) {
        if (!isCkptError(err, 'CONFLICT') || attempt >= maxAttempts) throw err;
        await backoff(attempt);
      }
    }
  }

  /** The checkpoint `seq` (default: the head), or null when it is not stored. */
  async load<D = T>(sessionId: string, seq?: number): Promise<Checkpoint<D> | null> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      const wanted = seq === undefined ? null : checkPositiveInteger(seq, 'seq');
      const stored = await this.#backend.load(sessionId, wanted);
      return stored === null ? null : this.#toCheckpoint<D>(sessionId, stored);
    });
  }

  /**
   * The checkpoint that `checkpoint()` wrote with `idempotencyKey` in this session, or null
   * when none is stored (never written with that key, pruned since, or the session deleted
   * since). A fork does not carry its source's keys.
   */
  async loadByKey<D = T>(sessionId: string, idempotencyKey: string): Promise<Checkpoint<D> | null> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      const key = checkName(idempotencyKey, 'idempotencyKey');
      const stored = await this.#backend.loadByKey(sessionId, key);
      return stored === null ? null : this.#toCheckpoint<D>(sessionId, stored);
    });
  }

  /** The session's head seq, or null when the session does not exist. */
  async head(sessionId: string): Promise<number | null> {
    return (await this.info(sessionId))?.head ?? null;
  }

  /** The session's summary, or null when it does not exist. */
  async info(sessionId: string): Promise<SessionInfo | null> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      const stored = await this.#backend.session(sessionId);
      return stored === null ? null : toSessionInfo(stored);
    });
  }

  /**
   * Replace the session's tags with `tags` (`{}` removes them all), on their own: the session's
   * checkpoints, head and updatedAt stay as they are. NOT_FOUND when the session does not exist.
   */
  async setTags(sessionId: string, tags: Record<string, string>): Promise<void> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      const checked = this.#checkedTags(tags, 'tags');
      if (!(await this.#backend.setTags(sessionId, checked))) {
        throw notFound(sessionId, 'session', null);
      }
    });
  }

  /** `tags` checked (see checkTags), on a backend that keeps tags; else UNSUPPORTED. */
  #checkedTags(tags: unknown, argument: string): Tags {
    const checked = checkTags(tags, argument);
    if (!this.#backend.capabilities.tags) {
      throw unsupported(this.#backend.name, `${argument} given to the store`, 'tags');
    }
    return checked;
  }

  /** The active timeline: the head and its stored ancestors, oldest first. */
  async history(sessionId: string): Promise<number[]> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      const chain = await this.#backend.lineage(sessionId, {
        fromSeq: null,
        limit: Number.MAX_SAFE_INTEGER,
        transcript: false,
      });
      return chain.map((entry) => entry.seq).reverse();
    });
  }

  /** Every stored checkpoint of the session, on every branch, seq descending. */
  async list(sessionId: string, page?: ListOptions): Promise<Page<CheckpointInfo>> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      const owner: CursorOwner = { method: 'list', listing: sessionId };
      const { limit, after } = readPage<number>(page, owner, ['limit', 'cursor', 'beforeSeq']);
      const below =
        page?.beforeSeq === undefined ? null : checkPositiveInteger(page.beforeSeq, 'beforeSeq');
      // A cursor and beforeSeq together: the page starts below both.
      const fromCursor = after === null ? null : listPosition(after);
      const beforeSeq =
        fromCursor === null ? below : below === null ? fromCursor : Math.min(fromCursor, below);
      const rows = await this.#backend.listCheckpoints(sessionId, { beforeSeq, limit: limit + 1 });
      const infos = rows.map((row) => ({
        sessionId,
        seq: row.seq,
        parent: row.parent,
        metadata: decodeMetadata(row.metadata),
        createdAt: new Date(row.createdAt),
        pinned: row.pinned,
        pinNote: row.pinNote,
      }));
      return toPage(infos, limit, owner, (last) => last.seq);
    });
  }

  /** Transcript items of the checkpoints on the active timeline, newest first. */
  async transcript(sessionId: string, page?: PageOptions): Promise<Page<TranscriptEntry>> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      const owner: CursorOwner = { method: 'transcript', listing: sessionId };
      const { limit, after } = readPage<[number, number]>(page, owner);
      const start = after === null ? null : transcriptPosition(after);
      const { entries, resumeAt } = await walkTranscript(this.#values(sessionId), limit, start);
      if (entries.length > limit) {
        return toPage(entries, limit, owner, (last) => [last.seq, last.index]);
      }
      return { items: entries, cursor: resumeAt === null ? null : encodeCursor(owner, resumeAt) };
    });
  }

  /**
   * Move the head to stored checkpoint `seq`; returns the new head's seq (a number: `load` the
   * session for the checkpoint). Nothing is deleted.
   */
  async rollback(
    sessionId: string,
    seq: number,
    options?: { expectedHead?: number },
  ): Promise<number> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      checkPositiveInteger(seq, 'seq');
      const opts = checkOptions(options, 'options', ['expectedHead'], 'rollback()');
      const expectedHead = checkExpectedHead(opts.expectedHead, false) ?? undefined;
      const result = await this.#backend.rollback({
        sessionId,
        seq,
        expectedHead,
        now: Date.now(),
      });
      switch (result.status) {
        case 'done':
          return seq;
        case 'conflict':
          throw headConflict(sessionId, expectedHead ?? null, result.head);
        case 'not_found':
          throw notFound(sessionId, result.missing, seq);
      }
    });
  }

  /**
   * Copy `atSeq` (default: the head), its ancestors and every checkpoint those need into a new
   * session; returns its id.
   */
  async fork(sessionId: string, options?: { atSeq?: number; newId?: string }): Promise<string> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      const opts = checkOptions(options, 'options', ['atSeq', 'newId'], 'fork()');
      const atSeq = opts.atSeq === undefined ? null : checkPositiveInteger(opts.atSeq, 'atSeq');
      const newId = opts.newId === undefined ? crypto.randomUUID() : checkName(opts.newId, 'newId');
      const result = await this.#backend.fork({ sessionId, atSeq, newId, now: Date.now() });
      switch (result.status) {
        case 'done':
          return newId;
        case 'exists':
          throw new CkptError(
            'CONFLICT',
            `fork: session ${JSON.stringify(newId)} already exists; pick another newId or omit it for a random one.`,
            { details: { argument: 'newId' } },
          );
        case 'not_found':
          throw notFound(sessionId, result.missing, atSeq);
      }
    });
  }

  /**
   * Remove the checkpoints that every rule given lets go: beyond the `keepLast` newest, and
   * created more than `olderThan` milliseconds ago. The head, pinned checkpoints and every
   * checkpoint a kept one needs (see `needs` of `checkpoint`) always stay. Returns how many
   * were removed.
   */
  async prune(sessionId: string, options: PruneOptions): Promise<number> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      const rule = checkPruneOptions(options, Date.now());
      return this.#backend.prune(sessionId, rule);
    });
  }

  /**
   * Pin stored checkpoint `seq`, with an optional note (1 to 255 characters): no prune, sweep
   * or retention removes it, and no sweep deletes its session; `delete` still does. Pinning a
   * pinned checkpoint replaces its note. NOT_FOUND when the session or seq is not stored.
   */
  async pin(sessionId: string, seq: number, options?: { note?: string }): Promise<void> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      checkPositiveInteger(seq, 'seq');
      const opts = checkOptions(options, 'options', ['note'], 'pin()');
      const note = opts.note === undefined ? null : checkName(opts.note, 'note');
      const result = await this.#backend.pin({ sessionId, seq, note });
      if (result.status === 'not_found') throw notFound(sessionId, result.missing, seq);
    });
  }

  /** Unpin checkpoint `seq`; false when it was not pinned (or is not stored). */
  async unpin(sessionId: string, seq: number): Promise<boolean> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      checkPositiveInteger(seq, 'seq');
      return this.#backend.unpin(sessionId, seq);
    });
  }

  /**
   * Walk the whole store a page at a time: delete each session idle (no checkpoint, rollback
   * or import of its own) for longer than `idleFor` milliseconds that holds no pin, and prune
   * every other one by `keepLast` / `olderThan`. Each deletion is decided atomically by the
   * backend, so a session written meanwhile stays. Returns what it removed (with `dryRun`:
   * would remove). Stopped by `signal`, it can simply be run again.
   */
  async sweep(options: SweepOptions): Promise<SweepResult> {
    if (this.#closed) throw closedError();
    return sweep(this.#backend, (fn) => this.#run(fn), options);
  }

  /** Remove the session with every branch and its transcript; false when it did not exist. */
  async delete(sessionId: string): Promise<boolean> {
    return this.#run(async () => {
      checkName(sessionId, 'sessionId');
      return this.#backend.delete(sessionId);
    });
  }

  /**
   * The sessions (only those whose id starts with `prefix`, and that have every tag of `where`,
   * when given), most recently updated first (then by id, descending). A cursor continues the
   * listing it came from: the same prefix and `where`, or none.
   */
  async sessions(page?: SessionsOptions): Promise<Page<SessionInfo>> {
    return this.#run(async () => {
      const prefix =
        page?.prefix === undefined || page.prefix === '' ? '' : checkName(page.prefix, 'prefix');
      // In the order given: the backend walks the index of the first pair (the rarest, as the
      // README asks), checking the others.
      const where = page?.where === undefined ? {} : checkTags(page.where, 'where', 'given');
      const filtered = Object.keys(where).length > 0;
      const owner: CursorOwner = {
        method: 'sessions',
        // A listing without `where` keeps the cursors it gave before tags existed; the same
        // pairs in another order are the same listing.
        listing: filtered ? JSON.stringify([prefix, checkTags(where, 'where')]) : prefix,
      };
      const { limit, after } = readPage<[number, string]>(cursorFromAfter(page), owner, [
        'limit',
        'cursor',
        'prefix',
        'where',
      ]);
      if (!this.#backend.capabilities.listSessions) {
        throw unsupported(this.#backend.name, 'sessions()', 'listSessions');
      }
      if (filtered && !this.#backend.capabilities.tags) {
        throw unsupported(this.#backend.name, 'sessions() with where', 'tags');
      }
      const position: SessionPosition | null = after === null ? null : sessionPosition(after);
      const rows = await this.#backend.sessions({
        after: position,
        limit: limit + 1,
        prefix,
        where,
      });
      return toPage(rows.map(toSessionInfo), limit, owner, (last) => [
        last.updatedAt.getTime(),
        last.sessionId,
      ]);
    });
  }

  /**
   * The session exactly as stored, for `importSession` on any store: its head, forkedFrom and
   * times, and every checkpoint on every branch (seq, parent, data, metadata, transcript items,
   * createdAt, needs), read a page at a time as `checkpoints` is iterated. Null when it does not
   * exist. A session written while it is read fails the iteration with CONFLICT. Idempotency
   * keys are not carried.
   */
  async exportSession(sessionId: string): Promise<SessionExport | null> {
    checkName(sessionId, 'sessionId');
    return exportSession(this.#values(sessionId), (fn) => this.#run(fn));
  }

  /**
   * Store a whole session, as `exportSession` gives it, so that every read answers as it did
   * where it came from. All or nothing: every value is checked first, then it is written in one
   * atomic step, so a retry finds it whole or absent. An existing id is refused with CONFLICT,
   * unless `ifExists` says `'skip'` (returns `'skipped'`) or `'replace'`.
   */
  async importSession(
    session: SessionImport,
    options?: ImportOptions,
  ): Promise<'imported' | 'skipped'> {
    return importSession(
      this.#backend,
      (fn) => this.#run(fn),
      session,
      options,
      this.#maxPayloadBytes,
      this.#codecs,
    );
  }

  /**
   * Rewrite every stored value (checkpoint data, transcript items, state values) that this
   * store's codecs would not write as it is, such as one sealed under a key that is no longer
   * current, beside live writers and without changing seqs, ids, times or metadata. A page at a
   * time; needs the backend's `rewriteCheckpoint()` and both listings, else UNSUPPORTED.
   */
  async reencode(options?: ReencodeOptions): Promise<ReencodeResult> {
    if (this.#closed) throw closedError();
    return reencode(this.#backend, this.#codecs, (fn) => this.#run(fn), options);
  }

  /** The state scopes that hold at least one key, ascending (by UTF-8 bytes). */
  async stateScopes(page?: PageOptions): Promise<Page<string>> {
    return this.#run(async () => {
      const owner: CursorOwner = { method: 'stateScopes', listing: '' };
      const { limit, after } = readPage<string>(page, owner);
      if (after !== null && typeof after !== 'string') {
        throw invalidArgument('cursor', 'cursor is damaged; start over with cursor null.');
      }
      if (!this.#backend.capabilities.listStateKeys) {
        throw unsupported(this.#backend.name, 'stateScopes()', 'listStateKeys');
      }
      const scopes = await this.#backend.stateScopes({ after, limit: limit + 1 });
      return toPage(scopes, limit, owner, (last) => last);
    });
  }

  /** A small JSON key-value space named `scope`, beside the checkpoints; `V` is its values' type. */
  state<V = JsonValue>(scope: string): StateScope<V> {
    checkName(scope, 'scope');
    return createStateScope(
      this.#backend,
      scope,
      (fn) => this.#run(fn),
      this.#maxPayloadBytes,
      this.#codecs,
    ) as unknown as StateScope<V>;
  }

  /**
   * The changes of every process writing to this store (checkpoints, rollbacks, forks, deletes,
   * prunes, state values), as they commit, oldest first; only `sessionId`'s, or those whose id
   * starts with `prefix`, when given. From `since` (an event's cursor), what changed after that
   * event comes first. Never skips a change: when the backend's change log no longer holds what
   * followed `since` (or what a watcher fell behind by), the iteration fails with EXPIRED, and the
   * caller reloads. Ends when `signal` aborts, the loop stops, or the store closes. UNSUPPORTED
   * on a backend without a change log.
   */
  watch(options?: WatchOptions): ChangeStream {
    if (this.#closed) throw closedError();
    return watchChanges(
      { backend: this.#backend, tail: this.#tail, run: (fn) => this.#run(fn) },
      options,
    );
  }

  /** Let the calls in flight finish, then release the backend; later calls fail with CLOSED. */
  async close(): Promise<void> {
    if (this.#closing === undefined) {
      this.#tail.stop();
      this.#closed = true;
      this.#closing = this.#closeWhenSettled();
    }
    return this.#closing;
  }

  /**
   * Remove everything this store holds in its namespace, for good: every session and state
   * value, and the tables, routines and records the backend made for them (what exactly, its
   * README says), leaving every other namespace on the same storage alone. Then close the
   * store: later calls fail with CLOSED. Calls already in flight finish first; calls made
   * meanwhile fail with CLOSED. A backend without `destroy()` raises UNSUPPORTED and the store
   * stays open.
   */
  async destroy(): Promise<void> {
    if (this.#closed) throw closedError();
    const destroy = this.#backend.destroy?.bind(this.#backend);
    if (destroy === undefined) {
      throw new CkptError(
        'UNSUPPORTED',
        `destroy() is not supported by the ${this.#backend.name} backend, which has no destroy(); nothing was removed and the store is still open.`,
        { details: { capability: 'destroy' } },
      );
    }
    let failure: unknown;
    this.#tail.stop();
    this.#closed = true;
    this.#closing = this.#closeWhenSettled(async () => {
      try {
        await destroy();
      } catch (err) {
        failure = err;
      }
    });
    await this.#closing;
    if (failure !== undefined) throw toCkptError(failure, this.#backend.name, this.#errorHint);
  }

  // Calls already running get to finish: a pool closed under them could leave their promises
  // waiting forever for a connection, with no way to learn whether they wrote.
  async #closeWhenSettled(beforeClosing?: () => Promise<void>): Promise<void> {
    if (this.#running > 0) {
      await new Promise<void>((resolve) => {
        this.#settled = resolve;
      });
    }
    await beforeClosing?.();
    await this.#backend.close();
  }

  /**
   * Apply the `retention` option after checkpoint `seq` was written. The checkpoint is stored
   * and acknowledged whatever happens here: a prune that fails is left to the next one, which
   * removes what this one would have.
   */
  async #retain(sessionId: string, seq: number, now: number): Promise<void> {
    const rule = this.#retention?.(seq, now);
    if (rule == null) return;
    try {
      await this.#backend.prune(sessionId, rule);
    } catch {
      // The next interval's prune covers this one's work.
    }
  }

  /** Reads the stored values of `sessionId` through the codecs. */
  #values(sessionId: string): SessionValues {
    return new SessionValues(this.#backend, this.#codecs, sessionId);
  }

  /** A stored checkpoint as the store returns it; its data is `D` for TypeScript only. */
  async #toCheckpoint<D = JsonValue>(
    sessionId: string,
    stored: StoredCheckpoint,
  ): Promise<Checkpoint<D>> {
    const decoded = await decodeCheckpoint(this.#values(sessionId), stored);
    return { sessionId, ...decoded } as Checkpoint<D>;
  }

  /** Run one public call: refuse after close, and wrap driver failures as BACKEND. */
  async #run<T>(fn: () => Promise<T>): Promise<T> {
    if (this.#closed) throw closedError();
    this.#running++;
    try {
      return await fn();
    } catch (err) {
      throw toCkptError(err, this.#backend.name, this.#errorHint);
    } finally {
      if (--this.#running === 0) this.#settled?.();
    }
  }
}

function closedError(): CkptError {
  return new CkptError('CLOSED', 'this CheckpointStore was closed; open a new one.');
}

/** `CheckpointOptions` as the store reads them, whatever their items' type: checked at run time. */
type CheckedOptions = Omit<CheckpointOptions, 'transcript'> & { transcript?: readonly unknown[] };

/**
 * What `update()`'s function returns for data of type `D`: a `D` (never inferred from the
 * function, so that `update<MyState>` checks against `MyState`).
 */
type UpdatedData<D> = JsonCompatible<[D][D extends unknown ? 0 : never]>;

function toSessionInfo(stored: StoredSession): SessionInfo {
  return {
    sessionId: stored.sessionId,
    head: stored.head,
    checkpoints: stored.checkpoints,
    forkedFrom: stored.forkedFrom,
    metadata: decodeMetadata(stored.metadata),
    createdAt: new Date(stored.createdAt),
    updatedAt: new Date(stored.updatedAt),
    tags: { ...stored.tags },
  };
}

/**
 * `page` with `after`, the other name of `cursor`, read as `cursor`; both given must agree.
 */
function cursorFromAfter(page: SessionsOptions | undefined): SessionsOptions | undefined {
  if (page === undefined || page === null || typeof page !== 'object' || !('after' in page)) {
    return page;
  }
  const { after, ...rest } = page;
  if (rest.cursor !== undefined && rest.cursor !== null && rest.cursor !== after) {
    throw invalidArgument('after', 'after is the other name of cursor; give one of them.');
  }
  return { ...rest, cursor: rest.cursor ?? after };
}

function headConflict(sessionId: string, expected: number | null, actual: number | null) {
  const want = expected === null ? 'no session yet' : `head ${expected}`;
  const have = actual === null ? 'the session does not exist' : `the actual head is ${actual}`;
  return new CkptError(
    'CONFLICT',
    `session ${JSON.stringify(sessionId)}: expected ${want}, but ${have}; reload and retry.`,
    { details: { argument: 'expectedHead', expectedHead: expected, actualHead: actual } },
  );
}

function notFound(sessionId: string, missing: 'session' | 'seq', seq: number | null) {
  const what =
    missing === 'session'
      ? `session ${JSON.stringify(sessionId)} does not exist`
      : `session ${JSON.stringify(sessionId)} has no stored checkpoint ${seq}`;
  return new CkptError('NOT_FOUND', `${what}.`, {
    details: { argument: missing === 'session' ? 'sessionId' : 'seq' },
  });
}

function backoff(attempt: number): Promise<void> {
  // Jittered exponential backoff keeps contending updaters from colliding in lockstep.
  const ceiling = Math.min(2 ** attempt, 100);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}
