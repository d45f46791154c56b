/**
 * The (thread, namespace) pairs a `list` without a thread walks when its filter names tagged
 * keys: the sessions the store's tag index finds, in the order the walk of every thread gives
 * them (threads by id, each thread's namespaces as the thread index recorded them), so that the
 * index changes what is read, never what is listed.
 */
import { allItems, type CheckpointStore, compareCodePoints, MAX_PAGE_LIMIT } from '@ckpt/core';
import { type Target, targetOfSession } from './names.js';
import type { ThreadIndex } from './thread-index.js';
import { RETAGGED, type Tags } from './thread-tags.js';

/**
 * The pairs whose sessions have the tags `where`, or are RETAGGED (a tagged key's value changed
 * there, so an earlier checkpoint may match what the tags no longer say), of `namespace` when
 * it is a string. The sessions are found before the first pair is given: the index gives them
 * most recently updated first, the walk of every thread by id.
 */
export async function* taggedTargets(
  store: CheckpointStore,
  index: ThreadIndex,
  where: Tags,
  namespace: unknown,
): AsyncGenerator<Target> {
  const found = new Map<string, Set<string>>();
  for (const tags of [where, RETAGGED]) {
    const sessions = allItems((cursor) =>
      store.sessions({ where: tags, limit: MAX_PAGE_LIMIT, cursor }),
    );
    for await (const { sessionId } of sessions) {
      const target = targetOfSession(sessionId);
      if (target === undefined) continue;
      if (typeof namespace === 'string' && target.namespace !== namespace) continue;
      const namespaces = found.get(target.threadId) ?? new Set();
      found.set(target.threadId, namespaces.add(target.namespace));
    }
  }
  for (const threadId of [...found.keys()].sort(compareCodePoints)) {
    const namespaces = found.get(threadId)!;
    // A session the saver did not record (core's fork made it) is not walked either.
    for (const ns of await index.recordedNamespaces(store, threadId)) {
      if (namespaces.has(ns)) yield { threadId, namespace: ns };
    }
  }
}
