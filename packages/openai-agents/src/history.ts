/**
 * A conversation's history as a ckpt session's transcript. Every change is one checkpoint:
 * added items are its transcript items; a removal (popItem, a replaced suffix) is a marker
 * item that drops the last n items before it. Nothing is deleted, so every earlier history
 * stays in the session's ckpt history, where a rollback brings it back.
 */
import type { CheckpointStore, JsonValue } from '@ckpt/core';

/** The key of the marker item that drops items. */
const DROP = 'ckpt.drop';

/** The markers that drop the `count` items before them: one, or none to drop nothing. */
export function dropMarkers(count: number): JsonValue[] {
  return count > 0 ? [{ [DROP]: count }] : [];
}

/** How many items the marker `item` drops; undefined when `item` is an item, not a marker. */
function dropped(item: JsonValue): number | undefined {
  if (typeof item !== 'object' || item === null || Array.isArray(item)) return undefined;
  const count = item[DROP];
  return typeof count === 'number' && Object.keys(item).length === 1 ? count : undefined;
}

/** The largest transcript page. */
const MAX_PAGE = 1000;

/**
 * The newest `limit` items of the history (all of them when undefined), oldest first, read
 * from the newest transcript page back only as far as needed.
 */
export async function newestItems(
  store: CheckpointStore,
  sessionId: string,
  limit: number | undefined,
): Promise<JsonValue[]> {
  const out: JsonValue[] = [];
  if (limit !== undefined && limit <= 0) return out;
  let skip = 0;
  let cursor: string | null = null;
  do {
    const pageLimit =
      limit === undefined ? MAX_PAGE : Math.min(MAX_PAGE, limit - out.length + skip + 1);
    const page = await store.transcript(sessionId, { limit: pageLimit, cursor });
    for (const entry of page.items) {
      const drop = dropped(entry.item);
      if (drop !== undefined) skip += drop;
      else if (skip > 0) skip--;
      else {
        out.push(entry.item);
        if (limit !== undefined && out.length >= limit) return out.reverse();
      }
    }
    cursor = page.cursor;
  } while (cursor !== null);
  return out.reverse();
}
