/**
 * `kvBackend`'s change log on a KV store that keeps a log of its writes (`KvStore.changes`):
 * the writes of its keys read as the changes `watch()` gives. A session's record is its single
 * commit point, and each write of it says which change it was (`SessionRecord.change`), so a
 * record written is a checkpoint, rollback, fork or prune with the head it names; a record
 * removed, or swapped for a sweep's tombstone, is a delete; a state value written or removed is
 * a change of its scope. Bodies, idempotency keys and tag index entries are no change of their
 * own: the record that names them is (a change of tags alone writes it as `quiet`). Since the log is the store's own record of its writes, every change of
 * every process is in it, in the order it committed, and positions are the store's.
 */
import type { ChangeLog, ChangesPage, StoredChange } from '../adapter/backend.js';
import { notThisLog } from '../adapter/change-positions.js';
import type { KvChange, KvStore } from './kv-store.js';
import { type kvKeys, type SessionRecord, TOMBSTONE } from './layout.js';

/** The change a write of the log is, with its position; null for a write watchers do not see. */
export function changeOfWrite(
  write: KvChange,
  keys: ReturnType<typeof kvKeys>,
): StoredChange | null {
  const { key, value, position } = write;
  if (key.startsWith(keys.states)) {
    return { position, sessionId: keys.scopeOf(key), kind: 'state', seq: null };
  }
  if (!key.startsWith(keys.sessions)) return null;
  const sessionId = keys.sessionIdOf(key);
  // A delete() that clears a sweep's tombstone reads as a second delete: harmless, since a
  // deleted session's watcher already holds nothing of it, and the log does not say what the
  // key held before.
  if (value === null || value === TOMBSTONE) {
    return { position, sessionId, kind: 'delete', seq: null };
  }
  const record = JSON.parse(value) as SessionRecord;
  const kind = record.change ?? 'checkpoint';
  return kind === 'quiet' ? null : { position, sessionId, kind, seq: record.head };
}

/**
 * The change log read from `kv`'s log of writes, for the keys `keys` lays out: a page of at
 * most `limit` changes reads the log on past writes that are no change (bodies, other keys of
 * the store) until it has them, or the log's end.
 */
export function kvChangeLog(
  kv: KvStore & Required<Pick<KvStore, 'changes'>>,
  keys: ReturnType<typeof kvKeys>,
): ChangeLog {
  return {
    ...(kv.onChanges && { onChanges: (wake) => kv.onChanges!(wake) }),
    ...(kv.changesPollMs !== undefined && { changesPollMs: kv.changesPollMs }),
    async changes({ after, limit }): Promise<ChangesPage | 'expired'> {
      const changes: StoredChange[] = [];
      let from = after;
      for (;;) {
        const page = await kv.changes({ after: from, limit });
        if (page === 'unknown') throw notThisLog(from!);
        // Past the first read, what was read stands; the next call learns the rest expired.
        if (page === 'expired')
          return changes.length === 0 ? 'expired' : { changes, position: from! };
        for (const write of page.changes) {
          const change = changeOfWrite(write, keys);
          if (change === null) continue;
          changes.push(change);
          if (changes.length === limit) return { changes, position: change.position };
        }
        // A short page is the log's end; a read of the end (after null) or of a position's
        // place (limit 0) reads no further.
        if (from === null || limit === 0 || page.changes.length < limit) {
          return { changes, position: page.position };
        }
        from = page.position;
      }
    },
  };
}
