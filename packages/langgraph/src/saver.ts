/**
 * `CkptSaver`: LangGraph's `BaseCheckpointSaver` on a ckpt `CheckpointStore`, so a LangGraph
 * graph checkpoints to any ckpt backend. Each (thread_id, checkpoint_ns) is a ckpt session,
 * each LangGraph checkpoint a ckpt checkpoint written with its id as the idempotency key, and
 * the pending writes, the thread's namespaces and the values pruning keeps live in one state
 * scope beside them.
 */
import {
  allItems,
  type CheckpointStore,
  type Checkpoint as CkptCheckpoint,
  CkptError,
  isCkptError,
  type JsonValue,
  MAX_NEEDS,
  type Metadata,
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
import { chainOf, holdValue, type KnownText, ValueReader } from './channel-values.js';
import { markDeleted, wasDeleted } from './deletion-marks.js';
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
import { mergeWrites, pendingWritesOf, type StoredWrite } from './pending-writes.js';
import {
  decodeValue,
  encodeValue,
  type Held,
  indexOf,
  neededSeqs,
  record,
  type StoredData,
  storedData,
  type ValueIndex,
  type Version,
} from './stored.js';
import {
  addedMessages,
  type KnownMessages,
  knownMessages,
  messagesIn,
  NO_MESSAGES,
  transcriptItem,
} from './transcript.js';

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
}

/** Options of `CkptSaver.prune`. */
export interface PruneThreadOptions {
  /** How many of each namespace's newest checkpoints to keep (the latest is always kept). */
  keepLast: number;
}

/** The place of a checkpoint the saver saw last in a session, for the next `put` on it. */
interface Seen {
  id: string;
  seq: number;
  index: ValueIndex;
  /** The texts of its channel values, where the saver has them, to hold the next as tails. */
  texts: Map<string, KnownText>;
  /** Its message channels, where the saver knows them, to tell what the next adds. */
  messages: Map<string, KnownMessages>;
}

/** How many sessions' last checkpoints (with their values' texts) a saver keeps in memory. */
const SEEN_SESSIONS = 256;
/** Page size of the listings the saver walks. */
const PAGE = 100;

const DEFAULT_SCOPE = 'langgraph';

/** A LangGraph checkpoint saver on a ckpt `CheckpointStore` (or a store URL, as `openStore` takes). */
export class CkptSaver extends BaseCheckpointSaver {
  readonly #store: Promise<CheckpointStore>;
  readonly #ownsStore: boolean;
  readonly #scope: string;
  readonly #transcript: boolean;
  readonly #seen = new Map<string, Seen>();
  /** Sessions whose namespace this saver has seen in its thread's index. */
  readonly #indexed = new Set<string>();

  constructor(store: CheckpointStore | string, options: CkptSaverOptions = {}) {
    super(options.serde);
    // Checked before a store is opened from a URL, which a refused saver would leave open.
    if (options.transcript !== undefined && typeof options.transcript !== 'boolean') {
      throw new CkptError(
        'INVALID_ARGUMENT',
        `options.transcript must be true or false, got ${JSON.stringify(options.transcript)}.`,
        { details: { argument: 'options.transcript' } },
      );
    }
    ({ store: this.#store, opened: this.#ownsStore } = useStore(store, 'CkptSaver'));
    this.#scope = options.scope ?? DEFAULT_SCOPE;
    this.#transcript = options.transcript ?? true;
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
    const id = checkpointIdOf(config);
    const found =
      id === undefined ? await store.load(sessionId) : await store.loadByKey(sessionId, id);
    return found === null
      ? undefined
      : this.#tupleOf(store, target, sessionId, found, { remember: true });
  }

  async *list(
    config: RunnableConfig,
    options: CheckpointListOptions = {},
  ): AsyncGenerator<CheckpointTuple> {
    const { limit, before, filter } = options;
    let left = limit ?? Number.POSITIVE_INFINITY;
    if (left <= 0) return;
    const store = await this.#store;
    const onlyId = checkpointIdOf(config);
    const beforeId = before === undefined ? undefined : checkpointIdOf(before);
    const ns = config.configurable?.checkpoint_ns;
    for await (const target of this.#targets(store, threadOf(config), ns)) {
      const sessionId = sessionOf(target.threadId, target.namespace);
      const beforeSeq = await this.#seqBefore(store, sessionId, target, before, beforeId);
      const reader = this.#reader(store, sessionId);
      let cursor: string | null = null;
      do {
        const page = await store.list(sessionId, {
          limit: filter === undefined ? Math.min(PAGE, left) : PAGE,
          cursor,
          ...(beforeSeq === undefined ? {} : { beforeSeq }),
        });
        const wanted = page.items.filter((info) => {
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
            return found === null
              ? undefined
              : this.#tupleOf(store, target, sessionId, found, { reader });
          }),
        );
        for (const tuple of tuples) {
          if (tuple === undefined || !matches(tuple.metadata, filter)) continue;
          yield tuple;
          if (--left <= 0) return;
        }
        cursor = page.cursor;
      } while (cursor !== null);
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
    const parent = parentId === null ? null : await this.#seenAt(store, sessionId, parentId);

    const { channel_values: _, ...rest } = checkpoint;
    let { values, refs } = await this.#held(checkpoint, newVersions, parent, true);
    // Too many checkpoints to name as needs: every value the checkpoint has is held whole.
    if (neededSeqs(values, refs).length > MAX_NEEDS) {
      ({ values, refs } = await this.#held(checkpoint, checkpoint.channel_versions, parent, false));
    }
    const stored: StoredData = {
      format: 1,
      id: checkpoint.id,
      parentId,
      checkpoint: await encodeValue(this.serde, rest),
      metadata: await encodeValue(this.serde, metadata),
      values,
      refs,
    };
    const { items, known } = this.#transcript
      ? await this.#messagesAdded(store, sessionId, parentId, parent, checkpoint, newVersions)
      : { items: [], known: new Map<string, KnownMessages>() };

    const indexed = this.#indexed.has(sessionId);
    if (!indexed) await this.#indexNamespace(store, target, sessionId);
    const data = stored as unknown as JsonValue;
    const needs = neededSeqs(values, refs);
    const options = {
      idempotencyKey: checkpoint.id,
      metadata: ckptMetadata(checkpoint.id, metadata),
      ...(needs.length > 0 ? { needs } : {}),
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
    if (indexed && written.parent === null) await this.#indexNamespace(store, target, sessionId);
    // What the store holds: this put's data, or a first put's with the same id, retried.
    const held = storedData(written.data);
    if (held !== null) {
      this.#remember(sessionId, written, textsAfterPut(held, written.seq, parent), known);
    }
    return configOf(target, checkpoint.id);
  }

  /**
   * How a checkpoint holds its values on `parent`: the channels in `changed` that it has, as
   * entries of its own (as tails on the parent's, where `tails` allows); every other channel
   * at the version its parent had, as a ref to where the parent's value is held.
   */
  async #held(
    checkpoint: Checkpoint,
    changed: ChannelVersions,
    parent: Seen | null,
    tails: boolean,
  ): Promise<{ values: Record<string, Held>; refs: Record<string, [Version, number]> }> {
    const values = record<Held>();
    for (const [channel, version] of Object.entries(changed)) {
      if (Object.hasOwn(checkpoint.channel_values, channel)) {
        const encoded = await encodeValue(this.serde, checkpoint.channel_values[channel]);
        const before = tails ? parent?.texts.get(channel) : undefined;
        values[channel] = holdValue(version, encoded, before);
      }
    }
    const refs = record<[Version, number]>();
    for (const [channel, version] of Object.entries(checkpoint.channel_versions)) {
      const at = parent?.index[channel];
      if (!Object.hasOwn(values, channel) && at !== undefined && at[0] === version) {
        refs[channel] = at;
      }
    }
    return { values, refs };
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
    const state = this.#state(store);
    const threadKey = stateKeys.thread(threadId);
    const namespaces = new Set(['', ...stringsIn(await state.get(threadKey))]);
    for (const namespace of namespaces) {
      const sessionId = sessionOf(threadId, namespace, THREAD_ARGUMENTS);
      const ids = await checkpointIds(store, sessionId);
      // Marked before the session goes: a putWrites that then finds no session learns from the
      // mark that its checkpoint was deleted (and removes its own), not yet to be written.
      if (ids.length > 0) {
        await state.update(stateKeys.deleted(sessionId), (current) => markDeleted(current, ids));
      }
      // The session before its writes: a putWrites that lands in between sees it gone.
      await store.delete(sessionId);
      await Promise.all(ids.map((id) => state.delete(stateKeys.writes(sessionId, id))));
      this.#forget(sessionId);
    }
    await state.delete(threadKey);
    if (!listsKeys(store) && stringsIn(await state.get(stateKeys.threads)).includes(threadId)) {
      await state.update(stateKeys.threads, (current) =>
        stringsIn(current).filter((id) => id !== threadId),
      );
    }
  }

  /**
   * Keep the `keepLast` newest checkpoints of each namespace of the thread (and its latest),
   * and those whose channel values they use; remove the others with their pending writes;
   * returns how many were removed.
   */
  async prune(threadId: string, options: PruneThreadOptions): Promise<number> {
    const keepLast = options?.keepLast;
    if (typeof keepLast !== 'number' || !Number.isSafeInteger(keepLast) || keepLast < 1) {
      throw new CkptError(
        'INVALID_ARGUMENT',
        `keepLast must be an integer of at least 1, got ${JSON.stringify(keepLast)}.`,
        { details: { argument: 'keepLast' } },
      );
    }
    // A thread id too long for any session is refused before anything is read.
    sessionOf(threadId, '', THREAD_ARGUMENTS);
    const store = await this.#store;
    const state = this.#state(store);
    const namespaces = new Set(['', ...stringsIn(await state.get(stateKeys.thread(threadId)))]);
    let removed = 0;
    for (const namespace of namespaces) {
      const sessionId = sessionOf(threadId, namespace, THREAD_ARGUMENTS);
      removed += await this.#pruneSession(store, state, sessionId, keepLast);
    }
    return removed;
  }

  /**
   * For each channel, the pending writes of the checkpoint's ancestors, oldest first, back to
   * the nearest ancestor that holds a value for it (the seed), as LangGraph defines it; walks
   * the parents by id, each checkpoint read once, decoding only what the channels need.
   */
  override async getDeltaChannelHistory(options: {
    config: RunnableConfig;
    channels: string[];
  }): Promise<Record<string, DeltaChannelHistory>> {
    const { config, channels } = options;
    const result: Record<string, DeltaChannelHistory> = {};
    if (channels.length === 0) return result;
    const blocks = new Map<string, CheckpointPendingWrite[][]>(channels.map((ch) => [ch, []]));
    const seeds = new Map<string, unknown>();
    const threadId = threadOf(config);
    if (threadId !== undefined) {
      const store = await this.#store;
      const sessionId = sessionOf(threadId, namespaceOf(config));
      const id = checkpointIdOf(config);
      const start =
        id === undefined ? await store.load(sessionId) : await store.loadByKey(sessionId, id);
      const remaining = new Set(channels);
      const reader = this.#reader(store, sessionId);
      let parentId = start === null ? null : (storedData(start.data)?.parentId ?? null);
      // Newest ancestor first; each contributes its writes, until a channel meets its value.
      while (parentId !== null && remaining.size > 0) {
        const found = await store.loadByKey(sessionId, parentId);
        const stored = found === null ? null : storedData(found.data);
        if (stored === null) break;
        const writes = await this.#pendingWrites(store, sessionId, stored.id);
        for (const channel of remaining) {
          blocks.get(channel)!.push(writes.filter((w) => w[1] === channel));
        }
        const held = [...remaining].filter(
          (ch) => Object.hasOwn(stored.values, ch) || Object.hasOwn(stored.refs, ch),
        );
        if (held.length > 0) {
          const { values } = await reader.values(stored, found!.seq);
          for (const channel of held) {
            if (Object.hasOwn(values, channel)) seeds.set(channel, values[channel]);
            remaining.delete(channel);
          }
        }
        parentId = stored.parentId;
      }
    }
    for (const channel of channels) {
      const entry: DeltaChannelHistory = { writes: blocks.get(channel)!.reverse().flat() };
      if (seeds.has(channel)) entry.seed = seeds.get(channel);
      result[channel] = entry;
    }
    return result;
  }

  /** Close the store, when the saver opened it from a URL; a store it was given stays open. */
  async close(): Promise<void> {
    if (this.#ownsStore) await (await this.#store).close();
  }

  #state(store: CheckpointStore): StateScope {
    return store.state(this.#scope);
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
    if (options.remember) this.#remember(sessionId, found, texts, this.#messagesOf(values));
    const tuple: CheckpointTuple = {
      config: configOf(target, stored.id),
      checkpoint,
      metadata,
      pendingWrites,
    };
    if (stored.parentId !== null) tuple.parentConfig = configOf(target, stored.parentId);
    return tuple;
  }

  #reader(store: CheckpointStore, sessionId: string): ValueReader {
    return new ValueReader(store, sessionId, this.serde);
  }

  async #pendingWrites(
    store: CheckpointStore,
    sessionId: string,
    checkpointId: string,
  ): Promise<CheckpointPendingWrite[]> {
    const stored = await this.#state(store).get(stateKeys.writes(sessionId, checkpointId));
    return pendingWritesOf(this.serde, stored);
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

  /** What the saver knows of checkpoint `id` for a put on it, or null when it is not stored. */
  async #seenAt(store: CheckpointStore, sessionId: string, id: string): Promise<Seen | null> {
    const seen = this.#seen.get(sessionId);
    if (seen?.id === id) return seen;
    const found = await store.loadByKey(sessionId, id);
    // Without the values' texts, the next put holds its values whole (and reads the messages
    // it needs to tell what it added).
    return found === null ? null : (this.#remember(sessionId, found, new Map(), new Map()) ?? null);
  }

  #remember(
    sessionId: string,
    found: CkptCheckpoint,
    texts: Map<string, KnownText>,
    messages: Map<string, KnownMessages>,
  ): Seen | undefined {
    const stored = storedData(found.data);
    if (stored === null) return undefined;
    const index = indexOf(stored, found.seq);
    const seen = { id: stored.id, seq: found.seq, index, texts, messages };
    this.#seen.delete(sessionId);
    this.#seen.set(sessionId, seen);
    if (this.#seen.size > SEEN_SESSIONS) this.#seen.delete(this.#seen.keys().next().value!);
    return seen;
  }

  /** What to remember of the message channels among a checkpoint's decoded `values`. */
  #messagesOf(values: Record<string, unknown>): Map<string, KnownMessages> {
    const known = new Map<string, KnownMessages>();
    if (!this.#transcript) return known;
    for (const [channel, value] of Object.entries(values)) {
      const messages = messagesIn(value);
      if (messages !== undefined) known.set(channel, knownMessages(messages));
    }
    return known;
  }

  /**
   * The transcript items of the messages `checkpoint` added to its message channels (those in
   * `newVersions`), and what to remember of its message channels for the next put. It never
   * fails a put: a value it cannot read is not transcribed.
   */
  async #messagesAdded(
    store: CheckpointStore,
    sessionId: string,
    parentId: string | null,
    parent: Seen | null,
    checkpoint: Checkpoint,
    newVersions: ChannelVersions,
  ): Promise<{ items: JsonValue[]; known: Map<string, KnownMessages> }> {
    const items: JsonValue[] = [];
    const known = new Map<string, KnownMessages>();
    for (const channel of Object.keys(newVersions)) {
      try {
        if (!Object.hasOwn(checkpoint.channel_values, channel)) continue;
        const messages = messagesIn(checkpoint.channel_values[channel]);
        if (messages === undefined) continue;
        known.set(channel, knownMessages(messages));
        const before =
          parentId === null
            ? NO_MESSAGES
            : await this.#messagesAt(store, sessionId, parent, channel);
        // A parent the saver cannot read: what it held, and so what was added, is unknown.
        if (before === undefined) continue;
        for (const message of addedMessages(messages, before)) {
          const item = transcriptItem(message, channel);
          if (item !== undefined) items.push(item);
        }
      } catch {}
    }
    // The channels it did not change hold what its parent's did.
    for (const [channel, was] of parent?.messages ?? []) {
      if (
        !known.has(channel) &&
        parent?.index[channel]?.[0] === checkpoint.channel_versions[channel]
      ) {
        known.set(channel, was);
      }
    }
    return { items, known };
  }

  /** The messages of `channel` at the checkpoint `parent`, read once when not yet known. */
  async #messagesAt(
    store: CheckpointStore,
    sessionId: string,
    parent: Seen | null,
    channel: string,
  ): Promise<KnownMessages | undefined> {
    if (parent === null) return undefined;
    const had = parent.messages.get(channel);
    if (had !== undefined) return had;
    const at = parent.index[channel];
    if (at === undefined) return NO_MESSAGES;
    // After a restart, or on a branch from an earlier checkpoint: its value, decoded once.
    const reader = this.#reader(store, sessionId);
    const held = await reader.held(at[1], channel);
    const encoded = held === undefined ? undefined : await reader.encoded(channel, held);
    if (encoded === undefined) return undefined;
    const messages = messagesIn(await decodeValue(this.serde, encoded));
    const known = messages === undefined ? NO_MESSAGES : knownMessages(messages);
    parent.messages.set(channel, known);
    return known;
  }

  #forget(sessionId: string): void {
    this.#seen.delete(sessionId);
    this.#indexed.delete(sessionId);
  }

  /** Record in the thread's index that it has checkpoints in `target.namespace`. */
  async #indexNamespace(store: CheckpointStore, target: Target, sessionId: string): Promise<void> {
    const state = this.#state(store);
    const key = stateKeys.thread(target.threadId);
    if (!stringsIn(await state.get(key)).includes(target.namespace)) {
      let isNew = false;
      await state.update(key, (current) => {
        const known = stringsIn(current);
        isNew = known.length === 0;
        return known.includes(target.namespace) ? known : [...known, target.namespace];
      });
      if (isNew && !listsKeys(store)) {
        await state.update(stateKeys.threads, (current) => {
          const threads = stringsIn(current);
          return threads.includes(target.threadId) ? threads : [...threads, target.threadId];
        });
      }
    }
    this.#indexed.add(sessionId);
  }

  /** The (thread, namespace) pairs a listing walks. */
  async *#targets(
    store: CheckpointStore,
    threadId: string | undefined,
    namespace: unknown,
  ): AsyncGenerator<Target> {
    const state = this.#state(store);
    const namespacesOf = async (thread: string) =>
      stringsIn(await state.get(stateKeys.thread(thread)));
    const wanted = (ns: string) => typeof namespace !== 'string' || ns === namespace;
    if (threadId !== undefined) {
      // The root namespace even when the index has no record of the thread (a session that
      // core's fork or an import made).
      const namespaces =
        typeof namespace === 'string'
          ? [namespace]
          : new Set(['', ...(await namespacesOf(threadId))]);
      for (const ns of namespaces) yield { threadId, namespace: ns };
      return;
    }
    const inThreads = async function* (threads: string[]) {
      for (const thread of threads) {
        for (const ns of (await namespacesOf(thread)).filter(wanted)) {
          yield { threadId: thread, namespace: ns };
        }
      }
    };
    if (!listsKeys(store)) {
      yield* inThreads(stringsIn(await state.get(stateKeys.threads)));
      return;
    }
    let cursor: string | null = null;
    do {
      const page = await state.keys({ prefix: stateKeys.threadPrefix, limit: PAGE, cursor });
      yield* inThreads(page.items.map((key) => key.slice(stateKeys.threadPrefix.length)));
      cursor = page.cursor;
    } while (cursor !== null);
  }

  /** The seq a `before` config names in this session, to start the listing below it. */
  async #seqBefore(
    store: CheckpointStore,
    sessionId: string,
    target: Target,
    before: RunnableConfig | undefined,
    beforeId: string | undefined,
  ): Promise<number | undefined> {
    if (before === undefined || beforeId === undefined) return undefined;
    if (threadOf(before) !== target.threadId || namespaceOf(before) !== target.namespace) {
      return undefined;
    }
    return (await store.loadByKey(sessionId, beforeId))?.seq;
  }

  async #pruneSession(
    store: CheckpointStore,
    state: StateScope,
    sessionId: string,
    keepLast: number,
  ): Promise<number> {
    const before = await checkpointIds(store, sessionId);
    // The store keeps the newest, and every checkpoint whose values they read (their needs).
    const removed = await store.prune(sessionId, { keepLast });
    if (removed === 0) return 0;
    const kept = new Set(await checkpointIds(store, sessionId));
    const gone = before.filter((id) => !kept.has(id));
    await Promise.all(gone.map((id) => state.delete(stateKeys.writes(sessionId, id))));
    const seen = this.#seen.get(sessionId);
    if (seen !== undefined && !kept.has(seen.id)) this.#seen.delete(sessionId);
    return removed;
  }
}

/** The ckpt metadata of a LangGraph checkpoint: its id, source and step, for listings. */
function ckptMetadata(id: string, metadata: CheckpointMetadata): Metadata {
  const out: Metadata = { checkpoint_id: id };
  if (typeof metadata?.source === 'string') out.source = metadata.source;
  if (typeof metadata?.step === 'number' && Number.isFinite(metadata.step))
    out.step = metadata.step;
  return out;
}

/** Whether `metadata` has every key of `filter` at an equal value. */
function matches(
  metadata: CheckpointMetadata | undefined,
  filter: Record<string, unknown> | undefined,
): boolean {
  if (filter === undefined) return true;
  const own = (metadata ?? {}) as Record<string, unknown>;
  return Object.entries(filter).every(([key, value]) => deepEqual(own[key], value));
}

function deepEqual(a: unknown, b: unknown): boolean {
  if (Object.is(a, b)) return true;
  if (typeof a !== 'object' || typeof b !== 'object' || a === null || b === null) return false;
  if (Array.isArray(a) !== Array.isArray(b)) return false;
  const ka = Object.keys(a);
  const kb = Object.keys(b);
  return (
    ka.length === kb.length &&
    ka.every((k) => deepEqual((a as Record<string, unknown>)[k], (b as Record<string, unknown>)[k]))
  );
}

/** Whether the store can list state keys, which walking every thread uses where it can. */
function listsKeys(store: CheckpointStore): boolean {
  return store.backend.capabilities.listStateKeys;
}

/** The strings of a stored array (namespaces, thread ids); [] for anything else. */
function stringsIn(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The LangGraph ids of a session's stored checkpoints, newest first. */
async function checkpointIds(store: CheckpointStore, sessionId: string): Promise<string[]> {
  const ids: string[] = [];
  for await (const item of allItems((cursor) => store.list(sessionId, { limit: PAGE, cursor }))) {
    const id = item.metadata.checkpoint_id;
    if (typeof id === 'string') ids.push(id);
  }
  return ids;
}

/**
 * The texts of a checkpoint's channel values just written at `seq` on `parent`, where they
 * follow from the parent's known texts without reading anything.
 */
function textsAfterPut(
  stored: StoredData,
  seq: number,
  parent: Seen | null,
): Map<string, KnownText> {
  const texts = new Map<string, KnownText>();
  for (const [channel, held] of Object.entries(stored.values)) {
    const before = parent?.texts.get(channel);
    if ('text' in held) {
      texts.set(channel, { type: held.type, text: held.text, chain: [seq] });
    } else if ('tail' in held && before !== undefined && sameSeqs(before.chain, held.on)) {
      const text = before.text.slice(0, held.keep) + held.tail;
      texts.set(channel, { type: held.type, text, chain: chainOf(held, seq) });
    }
  }
  for (const [channel, at] of Object.entries(stored.refs)) {
    const before = parent?.texts.get(channel);
    const was = parent?.index[channel];
    if (before !== undefined && was !== undefined && was[0] === at[0] && was[1] === at[1]) {
      texts.set(channel, before);
    }
  }
  return texts;
}

function sameSeqs(a: number[], b: number[]): boolean {
  return a.length === b.length && a.every((seq, i) => seq === b[i]);
}
