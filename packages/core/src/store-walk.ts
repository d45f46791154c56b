/** Walking a whole store: every session id, every state entry, a page at a time. */
import type { CheckpointStore } from './store.js';
import type { JsonValue } from './types.js';

/** Every item of a paged listing, fetching the next page as the last is taken. */
export async function* pages<T>(
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
  for await (const info of pages((cursor) => store.sessions({ limit: 1000, cursor }))) {
    yield info.sessionId;
  }
}

/** Every state value of `store`, by scope then key, both ascending. */
export async function* allStateEntries(
  store: CheckpointStore,
): AsyncGenerator<{ scope: string; key: string; value: JsonValue }> {
  for await (const scope of pages((cursor) => store.stateScopes({ limit: 1000, cursor }))) {
    const state = store.state(scope);
    for await (const key of pages((cursor) => state.keys({ limit: 1000, cursor }))) {
      const value = await state.get(key);
      // Deleted since it was listed.
      if (value !== undefined) yield { scope, key, value };
    }
  }
}
