/** Walking a whole store: every session id, every state entry, a page at a time. */
import type { CheckpointStore } from '../store/store.js';
import type { JsonValue } from '../values/json.js';

/**
 * Every item of a paged listing (`sessions`, `list`, `transcript`, `keys`, `stateScopes`),
 * fetching the next page as the last is taken: `allItems((cursor) => store.list(id, { cursor }))`.
 */
export async function* allItems<T>(
  fetch: (cursor: string | null) => Promise<{ items: T[]; cursor: string | null }>,
): AsyncGenerator<T> {
  for (let cursor: string | null = null; ; ) {
    const page = await fetch(cursor);
    yield* page.items;
    if (page.cursor === null) return;
    cursor = page.cursor;
  }
}

/** Every session id of `store`, most recently updated first. */
export async function* allSessionIds(store: CheckpointStore): AsyncGenerator<string> {
  for await (const info of allItems((cursor) => store.sessions({ limit: 1000, cursor }))) {
    yield info.sessionId;
  }
}

/** Every state value of `store`, by scope then key, both ascending. */
export async function* allStateEntries(
  store: CheckpointStore,
): AsyncGenerator<{ scope: string; key: string; value: JsonValue }> {
  for await (const scope of allItems((cursor) => store.stateScopes({ limit: 1000, cursor }))) {
    const state = store.state(scope);
    for await (const key of allItems((cursor) => state.keys({ limit: 1000, cursor }))) {
      const value = await state.get(key);
      // Deleted since it was listed.
      if (value !== undefined) yield { scope, key, value };
    }
  }
}
