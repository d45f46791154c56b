/**
 * The thread index in the saver's state scope: per thread, the namespaces it has checkpoints
 * in (for `deleteThread`, `prune`, `list` without a namespace, and the order in which `list`
 * gives the threads its tags find), and, on a backend that cannot list state keys, one value
 * naming every thread (for `list` without a thread).
 */
import { allItems, type CheckpointStore, type JsonValue, type StateScope } from '@ckpt/core';
import { stateKeys, type Target } from './names.js';

/** Page size of the state keys walked to find every thread. */
const PAGE = 100;

/** Whether the store can list state keys, which walking every thread uses where it can. */
function listsKeys(store: CheckpointStore): boolean {
  return store.capabilities.listStateKeys;
}

/** The strings of a stored array (namespaces, thread ids); [] for anything else. */
function stringsIn(value: JsonValue | undefined): string[] {
  return Array.isArray(value) ? value.filter((v): v is string => typeof v === 'string') : [];
}

/** The index of one saver's state scope, and which sessions this saver has recorded in it. */
export class ThreadIndex {
  readonly #scope: string;
  readonly #recorded = new Set<string>();

  constructor(scope: string) {
    this.#scope = scope;
  }

  #state(store: CheckpointStore): StateScope {
    return store.state(this.#scope);
  }

  /** Whether this saver has recorded the session's namespace (and not forgotten it since). */
  has(sessionId: string): boolean {
    return this.#recorded.has(sessionId);
  }

  /** Record that the thread has checkpoints in `target.namespace` (its session `sessionId`). */
  async record(store: CheckpointStore, target: Target, sessionId: string): Promise<void> {
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
    this.#recorded.add(sessionId);
  }

  /** Forget that this saver recorded the session, which was deleted. */
  forget(sessionId: string): void {
    this.#recorded.delete(sessionId);
  }

  /**
   * The namespaces of a thread: the root namespace '' always (a session that core's `fork`
   * or an import made has no record in the index), then those recorded.
   */
  async namespaces(store: CheckpointStore, threadId: string): Promise<string[]> {
    return [...new Set(['', ...(await this.recordedNamespaces(store, threadId))])];
  }

  /** The namespaces recorded for a thread, in the order they were recorded. */
  async recordedNamespaces(store: CheckpointStore, threadId: string): Promise<string[]> {
    return stringsIn(await this.#state(store).get(stateKeys.thread(threadId)));
  }

  /** The (thread, namespace) pairs a listing walks: of one thread, or of every thread. */
  async *targets(
    store: CheckpointStore,
    threadId: string | undefined,
    namespace: unknown,
  ): AsyncGenerator<Target> {
    if (threadId !== undefined) {
      const namespaces =
        typeof namespace === 'string' ? [namespace] : await this.namespaces(store, threadId);
      for (const ns of namespaces) yield { threadId, namespace: ns };
      return;
    }
    const wanted = (ns: string) => typeof namespace !== 'string' || ns === namespace;
    for await (const thread of this.#threads(store)) {
      for (const ns of (await this.recordedNamespaces(store, thread)).filter(wanted)) {
        yield { threadId: thread, namespace: ns };
      }
    }
  }

  /** Every thread recorded in the index. */
  async *#threads(store: CheckpointStore): AsyncGenerator<string> {
    const state = this.#state(store);
    if (!listsKeys(store)) {
      yield* stringsIn(await state.get(stateKeys.threads));
      return;
    }
    const prefix = stateKeys.threadPrefix;
    for await (const key of allItems((cursor) => state.keys({ prefix, limit: PAGE, cursor }))) {
      yield key.slice(prefix.length);
    }
  }

  /** Remove the thread from the index, once its sessions are gone. */
  async remove(store: CheckpointStore, threadId: string): Promise<void> {
    const state = this.#state(store);
    await state.delete(stateKeys.thread(threadId));
    if (!listsKeys(store) && stringsIn(await state.get(stateKeys.threads)).includes(threadId)) {
      await state.update(stateKeys.threads, (current) =>
        stringsIn(current).filter((id) => id !== threadId),
      );
    }
  }
}
