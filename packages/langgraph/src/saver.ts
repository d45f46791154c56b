/**
 * `CkptSaver`: LangGraph's `BaseCheckpointSaver` on a ckpt `CheckpointStore`, so a LangGraph
 * graph checkpoints to any ckpt backend. Each (thread_id, checkpoint_ns) is a ckpt session,
 * each LangGraph checkpoint a ckpt checkpoint written with its id as the idempotency key and
 * with the checkpoints whose values it reads as its needs, and the pending writes and the
 * thread's namespaces live in one state scope beside them. The metadata keys `tagKeys` names
 * are the sessions' tags, through which `list` finds threads by them.
 */
import {
  allItems,
  CheckpointStore,
  type Checkpoint as CkptCheckpoint,
  CkptError,
  isCkptError,
  type JsonValue,
  MAX_NEEDS,
  type StateScope,
  useStore,
} from '@ckpt/core';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  type ChannelVersions,
  type Checkpoint,
  type CheckpointListOptions,
  type CheckpointMetadata,
  type CheckpointPendingWrite,
  type CheckpointTuple,
  type DeltaChannelHistory,
  maxChannelVersion,
  type PendingWrite,
  type SerializerProtocol,
  TASKS,
  WRITES_IDX_MAP,
} from '@langchain/langgraph-checkpoint';
import { appendOnParent } from './append-on-parent.js';
import { holdValues, ValueReader } from './channel-values.js';
import { checkpointById, ckptMetadata, listed } from './checkpoint-metadata.js';
import { wasDeleted } from './deletion-marks.js';
import { deltaChannelHistory } from './delta-history.js';
import { matchesFilter, seqBefore } from './list-options.js';
import { messageChannelsOf, messagesAdded } from './messages-added.js';
import {
  checkpointIdOf,
  configOf,
  namespaceOf,
  requireTarget,
  sessionOf,
  stateKeys,
  type Target,
  THREAD_ARGUMENTS,
  threadOf,
} from './names.js';
import { ParentCache, textsAfterPut } from './parent-cache.js';
import { mergeWrites, readPendingWrites, type StoredWrite } from './pending-writes.js';
import { checkKeepLast, deleteSession, pruneSession } from './session-removal.js';
import { decodeValue, encodeValue, type StoredData, storedData } from './stored.js';
import { taggedTargets } from './tagged-threads.js';
import { ThreadIndex } from './thread-index.js';
import { checkTagKeys, ThreadTags } from './thread-tags.js';
import type { KnownMessages } from './transcript.js';

/** Options of a `CkptSaver`. */
export interface CkptSaverOptions {
  /** How channel values, metadata and writes are serialized; LangGraph's JsonPlusSerializer by default. */
  serde?: SerializerProtocol;
  /** The state scope for pending writes and the thread index. Default `langgraph`. */
  scope?: string;
  /**
   * Whether each `put` appends the messages its checkpoint added to the graph's message
   * channels to the session's transcript. Default true.
   */
  transcript?: boolean;
  /**
   * Metadata keys kept as the tags of each thread's sessions (at most 15, such as
   * `['user_id']`), so that `list` without a `thread_id` and with a `filter` on one of them finds
   * the threads through the store's tag index instead of walking every thread. A key a
   * checkpoint's metadata lacks is taken from the config's `metadata` (what `invoke` was given)
   * or `configurable` and stored in it, as LangGraph Python does. Name keys whose value is fixed
   * for a thread. Needs a store with the `tags` capability; default none.
   */
  tagKeys?: readonly string[];
}

/** The names of `CkptSaverOptions`. */
const OPTIONS = [
  'serde',
  'scope',
  'transcript',
  'tagKeys',
] as const satisfies readonly (keyof CkptSaverOptions)[];

/** `options` as given, refused with INVALID_ARGUMENT when naming an unknown option (a misspelling). */
function checkSaverOptions(options: CkptSaverOptions): CkptSaverOptions {
  for (const [key, value] of Object.entries(options ?? {})) {
    if (value !== undefined && !(OPTIONS as readonly string[]).includes(key)) {
      throw new CkptError(
        'INVALID_ARGUMENT',
        `CkptSaver options has no option ${JSON.stringify(key)}; the options are ${OPTIONS.join(', ')}.`,
        { details: { argument: 'options' } },
      );
    }
  }
  return options;
}

/** Options of `CkptSaver.prune`. */
export interface PruneThreadOptions {
  /** How many of each namespace's newest checkpoints to keep (the latest is always kept). */
  keepLast: number;
}

/** Page size of the listings the saver walks. */
const PAGE = 100;

const DEFAULT_SCOPE = 'langgraph';

/** What `saver.watch()` gives: the thread's checkpoints as they are written. */
export interface ThreadCheckpoints extends AsyncIterable<CheckpointTuple> {
  /** Resolves once every checkpoint written from then on is among what it gives. */
  readonly ready: Promise<void>;
}

/** A LangGraph checkpoint saver on a ckpt `CheckpointStore` (or a store URL, as `openStore` takes). */
export class CkptSaver extends BaseCheckpointSaver {
  readonly #store: Promise<CheckpointStore>;
  readonly #ownsStore: boolean;
  readonly #scope: string;
  readonly #transcript: boolean;
  readonly #parents = new ParentCache();
  readonly #index: ThreadIndex;
  readonly #tags: ThreadTags;

  constructor(store: CheckpointStore | string, options: CkptSaverOptions = {}) {
    super(checkSaverOptions(options).serde);
    // Checked before a store is opened from a URL, which a refused saver would leave open.
    if (options.transcript !== undefined && typeof options.transcript !== 'boolean') {
      throw new CkptError(
        'INVALID_ARGUMENT',
        `options.transcript must be true or false, got ${JSON.stringify(options.transcript)}.`,
        { details: { argument: 'options.transcript' } },
      );
    }
    this.#tags = new ThreadTags(checkTagKeys(options.tagKeys));
    if (this.#tags.keys.length > 0 && store instanceof CheckpointStore) requireTags(store);
    ({ store: this.#store, opened: this.#ownsStore } = useStore(store, 'CkptSaver'));
    this.#scope = options.scope ?? DEFAULT_SCOPE;
    this.#transcript = options.transcript ?? true;
    this.#index = new ThreadIndex(this.#scope);
  }

  /** A saver on the store at `url` (see `openStore`), opened and ready; `close()` closes it. */
  static async open(url: string, options?: CkptSaverOptions): Promise<CkptSaver> {
    const saver = new CkptSaver(url, options);
    await saver.#store;
    return saver;
  }

  /** The store under the saver. */
  get store(): Promise<CheckpointStore> {
    return this.#store;
  }

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const threadId = threadOf(config);
    if (threadId === undefined) return undefined;
    const target = { threadId, namespace: namespaceOf(config) };
    const store = await this.#store;
    const sessionId = sessionOf(target.threadId, target.namespace);
    const found = await loadOf(store, sessionId, checkpointIdOf(config));
    return found === null
      ? undefined
      : this.#tupleOf(store, target, sessionId, found, { remember: true });
  }

  /**
   * The thread's checkpoints as they are written, by any process (a worker running the graph,
   * another server): a tuple for each, read as `getTuple` reads it, oldest first; of the
   * config's `checkpoint_ns` (default: the root graph's). To follow a run from a page or a
   * monitor. `ready` resolves once it holds its place: every checkpoint written from then on is
   * among what it gives. Ends when `signal` aborts, when the loop stops, or when the store
   * closes; UNSUPPORTED on a store whose backend has no change log.
   */
  watch(config: RunnableConfig, options?: { signal?: AbortSignal }): ThreadCheckpoints {
    const target = requireTarget(config, 'watch');
    const sessionId = sessionOf(target.threadId, target.namespace);
    const started = this.#store.then(async (store) => {
      const changes = store.watch({ sessionId, signal: options?.signal });
      await changes.ready;
      return { store, changes };
    });
    started.catch(() => {});
    const tupleAt = async (store: CheckpointStore, seq: number) => {
      const found = await store.load(sessionId, seq);
      return found === null ? undefined : this.#tupleOf(store, target, sessionId, found);
    };
    return {
      ready: started.then(() => undefined),
      async *[Symbol.asyncIterator]() {
        const { store, changes } = await started;
        for await (const change of changes) {
          if (change.kind !== 'checkpoint' || change.seq === undefined) continue;
          // Gone already (a prune, a delete): nothing of it to give.
          const tuple = await tupleAt(store, change.seq);
          if (tuple !== undefined) yield tuple;
        }
      },
    };
  }

  async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const { limit, before, filter } = options;
    let left = limit ?? Number.POSITIVE_INFINITY;
    if (left <= 0) return;
    const store = await this.#store;
    const query: ListQuery = {
      onlyId: checkpointIdOf(config),
      before,
      beforeId: before === undefined ? undefined : checkpointIdOf(before),
      filter,
      left: () => left,
    };
    for await (const target of this.#listedTargets(store, config, filter)) {
      for await (const tuple of this.#listTarget(store, target, query)) {
        yield tuple;
        if (--left <= 0) return;
      }
    }
  }

  /**
   * The (thread, namespace) pairs a listing walks: of the config's thread; without one, those
   * the store's tag index finds when the filter names a tagged key, else every thread.
   */
  #listedTargets(
    store: CheckpointStore,
    config: RunnableConfig,
    filter: Record<string, unknown> | undefined,
  ): AsyncIterable<Target> {
    const threadId = threadOf(config);
    const ns = config.configurable?.checkpoint_ns;
    const where = threadId === undefined ? this.#tags.where(filter) : undefined;
    return where === undefined
      ? this.#index.targets(store, threadId, ns)
      : taggedTargets(store, this.#index, where, ns);
  }

  /** The checkpoints of one (thread, namespace) that a listing gives, newest first. */
  async *#listTarget(
    store: CheckpointStore,
    target: Target,
    query: ListQuery,
  ): AsyncGenerator<CheckpointTuple> {
    const { onlyId, before, beforeId, filter } = query;
    const sessionId = sessionOf(target.threadId, target.namespace);
    const beforeSeq = await seqBefore(store, sessionId, target, before, beforeId);
    const reader = this.#reader(store, sessionId);
    // A page at a time, so that the checkpoints of a page load at once.
    const pages = allItems(async (cursor) => {
      const page = await store.list(sessionId, {
        limit: filter === undefined ? Math.min(PAGE, query.left()) : PAGE,
        cursor,
        ...(beforeSeq === undefined ? {} : { beforeSeq }),
      });
      return { items: [page.items], cursor: page.cursor };
    });
    for await (const items of pages) {
      const wanted = items.filter((info) => {
        const id = info.metadata.checkpoint_id;
        return (
          typeof id === 'string' &&
          (onlyId === undefined || id === onlyId) &&
          (beforeId === undefined || id < beforeId)
        );
      });
      const tuples = await Promise.all(
        wanted.map(async (info) => {
          const found = await store.load(sessionId, info.seq);
          return found === null || !(await this.#matches(found, filter))
            ? undefined
            : this.#tupleOf(store, target, sessionId, found, { reader });
        }),
      );
      for (const tuple of tuples) if (tuple !== undefined) yield tuple;
    }
  }

  async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    const target = requireTarget(config, 'put');
    const store = await this.#store;
    const sessionId = sessionOf(target.threadId, target.namespace);
    const parentId = checkpointIdOf(config) ?? null;
    const recorded = this.#tags.metadataOf(metadata, config);
    const [parent, tags] = await Promise.all([
      parentId === null ? null : this.#parents.parent(store, sessionId, parentId),
      this.#tags.plan(store, sessionId, recorded),
    ]);

    const { channel_values: _, ...rest } = checkpoint;
    const holding = await holdValues(this.serde, checkpoint, newVersions, parent);
    const { values, refs } = holding;
    // On a checkpoint written before layout 2, whose needs are unknown, this one holds its values
    // whole and needs every checkpoint stored, so that no prune removes what those may read.
    const needs =
      parent === null || parent.needsKnown
        ? holding.needs
        : (await listed(store, sessionId))
            .slice(0, MAX_NEEDS)
            .map((cp) => cp.seq)
            .reverse();
    const stored: StoredData = {
      format: 1,
      id: checkpoint.id,
      parentId,
      checkpoint: await encodeValue(this.serde, rest),
      metadata: await encodeValue(this.serde, recorded),
      values,
      refs,
    };
    const { items, known } = this.#transcript
      ? await messagesAdded(
          this.#reader(store, sessionId),
          this.serde,
          parentId,
          parent,
          checkpoint,
          newVersions,
        )
      : { items: [], known: new Map<string, KnownMessages>() };

    const indexed = this.#index.has(sessionId);
    if (!indexed) await this.#index.record(store, target, sessionId);
    const data = stored as unknown as JsonValue;
    const options = {
      idempotencyKey: checkpoint.id,
      metadata: ckptMetadata(checkpoint.id, metadata),
      ...(needs.length > 0 ? { needs } : {}),
      ...(tags !== undefined ? { tags } : {}),
    };
    const parentSeq = parent?.seq ?? null;
    let written: CkptCheckpoint;
    try {
      written = await appendOnParent(
        store,
        sessionId,
        data,
        items.length > 0 ? { ...options, transcript: items } : options,
        parentSeq,
      );
    } catch (err) {
      // The transcript repeats the messages' text: a checkpoint too large with it goes without.
      if (items.length === 0 || !isCkptError(err, 'PAYLOAD_TOO_LARGE')) throw err;
      written = await appendOnParent(store, sessionId, data, options, parentSeq);
    }
    // The session was made anew (deleted by another process since this one indexed it).
    if (indexed && written.parent === null) await this.#index.record(store, target, sessionId);
    this.#tags.written(sessionId, tags);
    // What the store holds: this put's data, or a first put's with the same id, retried.
    const held = storedData(written.data);
    if (held !== null) {
      this.#parents.remember(sessionId, written, textsAfterPut(held, written.seq, parent), known);
    }
    return configOf(target, checkpoint.id);
  }

  async putWrites(
    config: RunnableConfig,
    writes: PendingWrite[],
    taskId: string,
    taskPath = '',
  ): Promise<void> {
    const target = requireTarget(config, 'putWrites');
    const checkpointId = checkpointIdOf(config);
    if (checkpointId === undefined) {
      throw new CkptError(
        'INVALID_ARGUMENT',
        'putWrites needs config.configurable.checkpoint_id: the checkpoint the writes belong to.',
        { details: { argument: 'checkpoint_id' } },
      );
    }
    const store = await this.#store;
    const sessionId = sessionOf(target.threadId, target.namespace);
    const incoming = await Promise.all(
      writes.map(
        async ([channel, value], i): Promise<StoredWrite> => ({
          task: taskId,
          idx: WRITES_IDX_MAP[channel] ?? i,
          channel,
          path: taskPath,
          value: await encodeValue(this.serde, value),
        }),
      ),
    );
    const key = stateKeys.writes(sessionId, checkpointId);
    const state = this.#state(store);
    await state.update(key, (current) => mergeWrites(current, incoming));
    // No session: deleteThread removed it, or the checkpoint's own put has not landed yet (with
    // LangGraph's 'async' durability the writes come first). Only a write to a checkpoint that
    // deleteThread removed must not outlive it; the mark was set before the session went.
    if (
      (await store.head(sessionId)) === null &&
      wasDeleted(await state.get(stateKeys.deleted(sessionId)), checkpointId)
    ) {
      await state.delete(key);
    }
  }

  async deleteThread(threadId: string): Promise<void> {
    // A thread id too long for any session is refused before anything is read.
    sessionOf(threadId, '', THREAD_ARGUMENTS);
    const store = await this.#store;
    for (const namespace of await this.#index.namespaces(store, threadId)) {
      const sessionId = sessionOf(threadId, namespace, THREAD_ARGUMENTS);
      await deleteSession(store, this.#state(store), sessionId);
      this.#parents.forget(sessionId);
      this.#index.forget(sessionId);
      this.#tags.forget(sessionId);
    }
    await this.#index.remove(store, threadId);
  }

  /**
   * Keep the `keepLast` newest checkpoints of each namespace of the thread (and its latest),
   * and those whose channel values they use; remove the others with their pending writes;
   * returns how many were removed.
   */
  async prune(threadId: string, options: PruneThreadOptions): Promise<number> {
    const keepLast = checkKeepLast(options?.keepLast);
    // A thread id too long for any session is refused before anything is read.
    sessionOf(threadId, '', THREAD_ARGUMENTS);
    const store = await this.#store;
    let removed = 0;
    for (const namespace of await this.#index.namespaces(store, threadId)) {
      const sessionId = sessionOf(threadId, namespace, THREAD_ARGUMENTS);
      const pruned = await pruneSession(store, this.#state(store), sessionId, keepLast);
      this.#parents.forget(sessionId, pruned.kept);
      removed += pruned.removed;
    }
    return removed;
  }

  /**
   * For each channel, the pending writes of the checkpoint's ancestors, oldest first, back to
   * the nearest ancestor that holds a value for it (the seed), as LangGraph defines it.
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const { config, channels } = options;
    const threadId = threadOf(config);
    if (threadId === undefined || channels.length === 0) return deltaChannelHistory(channels, null);
    const store = await this.#store;
    const sessionId = sessionOf(threadId, namespaceOf(config));
    return deltaChannelHistory(channels, {
      store,
      sessionId,
      start: await loadOf(store, sessionId, checkpointIdOf(config)),
      reader: this.#reader(store, sessionId),
      pendingWrites: (checkpointId) => this.#pendingWrites(store, sessionId, checkpointId),
    });
  }

  /** Close the store, when the saver opened it from a URL; a store it was given stays open. */
  async close(): Promise<void> {
    if (this.#ownsStore) await (await this.#store).close();
  }

  #state(store: CheckpointStore): StateScope {
    return store.state(this.#scope);
  }

  #reader(store: CheckpointStore, sessionId: string): ValueReader {
    const carried = { state: this.#state(store), key: stateKeys.carried(sessionId) };
    return new ValueReader(store, sessionId, this.serde, carried);
  }

  #pendingWrites(
    store: CheckpointStore,
    sessionId: string,
    checkpointId: string,
  ): Promise<CheckpointPendingWrite[]> {
    return readPendingWrites(this.#state(store), this.serde, sessionId, checkpointId);
  }

  /**
   * Whether a stored checkpoint's metadata matches `filter`, told from its metadata alone: a
   * checkpoint that does not match has none of its values rebuilt or writes read.
   */
  async #matches(
    found: CkptCheckpoint,
    filter: Record<string, unknown> | undefined,
  ): Promise<boolean> {
    if (filter === undefined) return true;
    const stored = storedData(found.data);
    if (stored === null) return false;
    const metadata = (await decodeValue(this.serde, stored.metadata)) as CheckpointMetadata;
    return matchesFilter(metadata, filter);
  }

  /** The tuple LangGraph reads for a stored checkpoint, or undefined when the saver did not write it. */
  async #tupleOf(
    store: CheckpointStore,
    target: Target,
    sessionId: string,
    found: CkptCheckpoint,
    options: { reader?: ValueReader; remember?: boolean } = {},
  ): Promise<CheckpointTuple | undefined> {
    const reader = options.reader ?? this.#reader(store, sessionId);
    const stored = storedData(found.data);
    if (stored === null) return undefined;
    const [body, metadata, { values, texts }, pendingWrites] = await Promise.all([
      decodeValue(this.serde, stored.checkpoint) as Promise<Omit<Checkpoint, 'channel_values'>>,
      decodeValue(this.serde, stored.metadata) as Promise<CheckpointMetadata>,
      reader.values(stored, found.seq),
      this.#pendingWrites(store, sessionId, stored.id),
    ]);
    const checkpoint: Checkpoint = { ...body, channel_values: values };
    if (checkpoint.v < 4 && stored.parentId !== null) {
      await this.#migratePendingSends(store, sessionId, stored.parentId, checkpoint);
    }
    // The checkpoint a later put is likely to continue from, with the texts to hold it as tails.
    if (options.remember) {
      const messages = this.#transcript ? messageChannelsOf(values) : new Map();
      this.#parents.remember(sessionId, found, texts, messages);
    }
    const tuple: CheckpointTuple = {
      config: configOf(target, stored.id),
      checkpoint,
      metadata,
      pendingWrites,
    };
    if (stored.parentId !== null) tuple.parentConfig = configOf(target, stored.parentId);
    return tuple;
  }

  /**
   * Checkpoints of format versions before 4 kept the sends of their parent's tasks as writes;
   * LangGraph reads them as the TASKS channel, as its own savers do.
   */
  async #migratePendingSends(
    store: CheckpointStore,
    sessionId: string,
    parentId: string,
    checkpoint: Checkpoint,
  ): Promise<void> {
    const writes = await this.#pendingWrites(store, sessionId, parentId);
    checkpoint.channel_values[TASKS] = writes.filter((w) => w[1] === TASKS).map((w) => w[2]);
    const versions = Object.values(checkpoint.channel_versions);
    checkpoint.channel_versions[TASKS] =
      versions.length > 0 ? maxChannelVersion(...versions) : this.getNextVersion(undefined);
  }
}

/** The checkpoint `id` of the session (by its idempotency key), or its head without an id. */
function loadOf(
  store: CheckpointStore,
  sessionId: string,
  id: string | undefined,
): Promise<CkptCheckpoint | null> {
  return id === undefined ? store.load(sessionId) : checkpointById(store, sessionId, id);
}

/** What a listing takes of each (thread, namespace) it walks. */
interface ListQuery {
  /** The config's `checkpoint_id`: only that checkpoint. */
  onlyId: string | undefined;
  before: RunnableConfig | undefined;
  /** The `checkpoint_id` of `before`: only checkpoints with lower ids. */
  beforeId: string | undefined;
  filter: Record<string, unknown> | undefined;
  /** How many tuples the listing may still give. */
  left: () => number;
}

/**
 * Refuse `tagKeys` on a store that cannot find sessions by their tags: one that keeps none, or
 * lists no sessions (a KV with only get, set and delete). (A store opened from a URL is of a
 * backend that lists sessions; without tags, its first tagged write is refused by the store.)
 */
function requireTags(store: CheckpointStore): void {
  const { tags, listSessions } = store.capabilities;
  if (tags && listSessions) return;
  const capability = tags ? 'listSessions' : 'tags';
  throw new CkptError(
    'UNSUPPORTED',
    `options.tagKeys needs a store that finds sessions by their tags (sessions() with where); the ${store.backendName} backend has no '${capability}' capability.`,
    { details: { capability, argument: 'options.tagKeys' } },
  );
}
