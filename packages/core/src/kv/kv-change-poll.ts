/**
 * `kvBackend`'s change log on a KV store that keeps no log of its writes, when asked for
 * (`watchByPolling`): at each poll, it lists every session record and state key, reads them
 * all, and tells what differs from the last poll. That is weaker than a log, and says so:
 *
 * - Changes between two polls come as one event a session (its latest kind and head), and one a
 *   state scope: a watcher learns every session that changed, not every change. A state value
 *   written and then written back as it was between two polls is not seen at all.
 * - Its positions are this process's: a cursor from another process, or from before this
 *   backend was opened, cannot say what it missed, so it fails with EXPIRED (reload).
 * - A poll costs a `list` of the catalog and of the state keys, and a `get` of each.
 */
import { createHash, randomBytes } from 'node:crypto';
import type { ChangeKind, ChangeLog, ChangesPage, StoredChange } from '../adapter/backend.js';
import { logPosition, notThisLog } from '../adapter/change-positions.js';
import type { KvStore } from './kv-store.js';
import { type kvKeys, type SessionRecord, TOMBSTONE } from './layout.js';
import { rangesCount } from './seq-ranges.js';

/** How often watchers poll by default: a poll reads the whole catalog. */
export const DEFAULT_POLL_MS = 1_000;
/** The events kept at least; a watcher further behind must reload (EXPIRED). */
const KEPT = 10_000;
/** Dropped at once, past what is kept: one copy of the array for many events. */
const DROPPED_AT_ONCE = 1_000;

/** What a poll notes of a session: what tells whether a watcher has a change to learn. */
interface SessionSeen {
  gen: string;
  head: number;
  last: number;
  checkpoints: number;
}

/** What a poll noted: each session, and a digest of each state value, by key. */
interface Scan {
  sessions: Map<string, SessionSeen>;
  states: Map<string, string>;
}

/** A position: this log's letters (no digits: see `positionOf`), then the event's number. */
const POSITION = /^([a-z]{12})\.(\d{20})$/;

/**
 * The kind of change that took a session from `before` to `now`, as the SQL backends' triggers
 * tell it; null when nothing a watcher follows changed (a pin, an unpin).
 */
function kindOfChange(
  before: SessionSeen | undefined,
  now: SessionSeen,
  rec: SessionRecord,
): ChangeKind | null {
  if (before === undefined || before.gen !== now.gen) {
    return rec.forkedFrom !== null && rec.last === rec.forkedFrom.seq ? 'fork' : 'checkpoint';
  }
  if (now.last !== before.last) return 'checkpoint';
  if (now.head !== before.head) return 'rollback';
  if (now.checkpoints < before.checkpoints) return 'prune';
  return null;
}

/** A digest of a state value: a poll keeps this, not the value. */
function digest(value: string): string {
  return createHash('sha256').update(value).digest('base64');
}

/** Twelve random lowercase letters: this log's mark on its positions. */
function letters(): string {
  return [...randomBytes(12)].map((byte) => String.fromCharCode(97 + (byte % 26))).join('');
}

/**
 * The change log a poll of `kv` (through `listAll`, every key with a prefix) makes, for the
 * keys `keys` lays out, read by watchers every `everyMs`.
 */
export function pollingChangeLog(
  kv: KvStore,
  keys: ReturnType<typeof kvKeys>,
  listAll: (prefix: string) => Promise<string[]>,
  everyMs: number,
): ChangeLog {
  // Letters only, so that a cursor of this log with its digits changed is still this log's,
  // and refused as one beyond its end rather than taken for another process's.
  const mark = letters();
  const positionOf = (number: number) => `${mark}.${logPosition(number)}`;
  /** The events kept, oldest first; the first is numbered `first`. */
  let events: StoredChange[] = [];
  let first = 1;
  const end = () => first + events.length - 1;
  /** The last poll's notes; null before the first, which only notes. */
  let seen: Scan | null = null;
  let polling: Promise<void> | undefined;

  const record = (sessionId: string, kind: ChangeKind, seq: number | null) => {
    events.push({ position: positionOf(end() + 1), sessionId, kind, seq });
    if (events.length > KEPT + DROPPED_AT_ONCE) {
      events = events.slice(DROPPED_AT_ONCE);
      first += DROPPED_AT_ONCE;
    }
  };

  const scan = async (): Promise<Scan & { changed: [string, ChangeKind, number | null][] }> => {
    const now: Scan = { sessions: new Map(), states: new Map() };
    const changed: [string, ChangeKind, number | null][] = [];
    for (const key of await listAll(keys.sessions)) {
      const raw = await kv.get(key);
      if (raw === undefined || raw === TOMBSTONE) continue;
      const rec = JSON.parse(raw) as SessionRecord;
      const id = keys.sessionIdOf(key);
      const noted = {
        gen: rec.gen,
        head: rec.head,
        last: rec.last,
        checkpoints: rangesCount(rec.seqs),
      };
      now.sessions.set(id, noted);
      const kind = kindOfChange(seen?.sessions.get(id), noted, rec);
      if (kind !== null) changed.push([id, kind, rec.head]);
    }
    for (const id of seen?.sessions.keys() ?? []) {
      if (!now.sessions.has(id)) changed.push([id, 'delete', null]);
    }
    const scopes = new Set<string>();
    for (const key of await listAll(keys.states)) {
      const value = await kv.get(key);
      if (value === undefined) continue;
      now.states.set(key, digest(value));
      if (seen?.states.get(key) !== now.states.get(key)) scopes.add(keys.scopeOf(key));
    }
    for (const key of seen?.states.keys() ?? []) {
      if (!now.states.has(key)) scopes.add(keys.scopeOf(key));
    }
    for (const scope of scopes) changed.push([scope, 'state', null]);
    return { ...now, changed };
  };

  /** One poll at a time: a read that comes during one shares it. */
  const poll = (): Promise<void> => {
    polling ??= (async () => {
      const { changed, ...now } = await scan();
      // The first poll only notes what there is: what came before it is no change to tell.
      if (seen !== null) for (const [id, kind, seq] of changed) record(id, kind, seq);
      seen = now;
    })().finally(() => {
      polling = undefined;
    });
    return polling;
  };

  return {
    changesPollMs: everyMs,
    async changes({ after, limit }): Promise<ChangesPage | 'expired'> {
      if (after === null) {
        await poll();
        return { changes: [], position: positionOf(end()) };
      }
      const parts = POSITION.exec(after);
      if (parts === null) throw notThisLog(after);
      // Another process's log, or an earlier one of this process: what it missed is unknown.
      if (parts[1] !== mark) return 'expired';
      const from = Number(parts[2]);
      if (from > end()) throw notThisLog(after);
      // A reader at the end polls; one behind reads what is kept, and polls once it caught up.
      if (limit > 0 && from === end()) await poll();
      if (from < first - 1) return 'expired';
      const changes = events.slice(from - first + 1, from - first + 1 + limit);
      return { changes, position: changes.at(-1)?.position ?? after };
    },
  };
}
