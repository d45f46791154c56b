/**
 * What each change to a store does and answers: the values `ckpt rollback|fork|prune|delete|
 * state … --json` print and the studio's API returns, made in one place so that both stay the
 * same.
 */
import { type CheckpointStore, CkptError, type JsonValue, type SessionInfo } from '@ckpt/core';
import { sameTags, tagsOrNone } from './tag-pairs.js';

/** What `rollback` answers. */
export interface RolledBack {
  sessionId: string;
  head: number;
  /** The head before, or null when the session was not there. */
  previousHead: number | null;
}

/** Move the session's head to `seq` (only if it is still `expectedHead`, when given). */
export async function rollbackSession(
  store: CheckpointStore,
  id: string,
  seq: number,
  expectedHead?: number,
): Promise<RolledBack> {
  const previousHead = (await store.info(id))?.head ?? null;
  await store.rollback(id, seq, { expectedHead });
  return { sessionId: id, head: seq, previousHead };
}

/** What `fork` answers: the new session, and where it came from. */
export interface Forked {
  sessionId: string;
  /** The seq is null when none was given: the head of the time. */
  forkedFrom: { sessionId: string; seq: number | null };
}

/** Copy checkpoint `atSeq` (default: the head) and its ancestors into a new session. */
export async function forkSession(
  store: CheckpointStore,
  id: string,
  options: { atSeq?: number; newId?: string },
): Promise<Forked> {
  const sessionId = await store.fork(id, options);
  return { sessionId, forkedFrom: { sessionId: id, seq: options.atSeq ?? null } };
}

/** What `prune` answers. */
export interface Pruned {
  sessionId: string;
  removed: number;
}

/**
 * Remove the checkpoints that every rule given lets go (beyond the `keepLast` newest, created
 * more than `olderThan` ms ago); the head, pinned checkpoints and what kept ones need stay.
 */
export async function pruneSession(
  store: CheckpointStore,
  id: string,
  rule: { keepLast?: number; olderThan?: number },
): Promise<Pruned> {
  return { sessionId: id, removed: await store.prune(id, rule) };
}

/** What `pin` and `unpin` answer. */
export interface Pinned {
  sessionId: string;
  seq: number;
  pinned: boolean;
  /** The pin's note; null when unpinned or pinned without one (`pinNote`, as `tree --json` says it). */
  pinNote: string | null;
  /** Whether the call changed anything (unpin of a checkpoint that was not pinned: false). */
  changed: boolean;
}

/**
 * Pin checkpoint `seq`. Without `note` a pinned checkpoint keeps the note it has, since core's
 * `pin()` would clear it and a re-pin to be sure is no reason to lose why it was kept; `''`
 * clears it (core takes no empty note, so it is a pin without one).
 */
export async function pinCheckpoint(
  store: CheckpointStore,
  id: string,
  seq: number,
  note?: string,
): Promise<Pinned & { wasPinned: boolean }> {
  const [current] = (await store.list(id, { beforeSeq: seq + 1, limit: 1 })).items;
  const was = current?.seq === seq && current.pinned ? { note: current.pinNote } : null;
  const pinNote = note === undefined ? (was?.note ?? null) : note === '' ? null : note;
  const changed = was === null || was.note !== pinNote;
  // A session or seq that is not stored reaches pin(), whose NOT_FOUND says which.
  if (changed) await store.pin(id, seq, pinNote === null ? undefined : { note: pinNote });
  return { sessionId: id, seq, pinned: true, pinNote, changed, wasPinned: was !== null };
}

/** Unpin checkpoint `seq`. */
export async function unpinCheckpoint(
  store: CheckpointStore,
  id: string,
  seq: number,
): Promise<Pinned> {
  const changed = await store.unpin(id, seq);
  return { sessionId: id, seq, pinned: false, pinNote: null, changed };
}

/** What `delete` answers. */
export interface Deleted {
  sessionId: string;
  /** False when there was no such session. */
  deleted: boolean;
}

/** Remove the session with every branch and its transcript. */
export async function deleteSession(store: CheckpointStore, id: string): Promise<Deleted> {
  return { sessionId: id, deleted: await store.delete(id) };
}

/** What `state … set` answers. */
export interface StateSet {
  scope: string;
  key: string;
  set: true;
}

/** Set a state value. */
export async function setState(
  store: CheckpointStore,
  scope: string,
  key: string,
  value: JsonValue,
): Promise<StateSet> {
  await store.state(scope).set(key, value);
  return { scope, key, set: true };
}

/** What `state … delete` answers. */
export interface StateDeleted {
  scope: string;
  key: string;
  /** False when the key was not set. */
  deleted: boolean;
}

/** Delete a state value. */
export async function deleteState(
  store: CheckpointStore,
  scope: string,
  key: string,
): Promise<StateDeleted> {
  return { scope, key, deleted: await store.state(scope).delete(key) };
}

/** What `tag` changes: tags to set, keys to remove, or (`replace`) the whole set. */
export interface TagChange {
  set: Record<string, string>;
  remove: string[];
  /** The session's tags become `set` exactly: nothing of the tags it had is kept. */
  replace: boolean;
}

/** What `tag` answers. */
export interface Tagged {
  sessionId: string;
  /** The session's tags now. */
  tags: Record<string, string>;
  /** Its tags as read before the change. */
  previous: Record<string, string>;
  /** False when the tags were already so, and nothing was written. */
  changed: boolean;
}

/**
 * Change the tags of a session known to exist. The store replaces a session's tags whole, so
 * tags set or removed alone are read, changed and written back. The store has no
 * compare-and-set of tags: what it can tell is checked after the write, and said as CONFLICT
 * (the write stays done): a checkpoint or rollback between the read and the check (it may
 * have set tags that this write replaced, or replaced this write's), or tags other than
 * those written. A `setTags` of another writer between the read and the write cannot be
 * told apart from no change at all; the README says so.
 */
export async function tagSession(
  store: CheckpointStore,
  before: SessionInfo,
  change: TagChange,
): Promise<Tagged> {
  const id = before.sessionId;
  const previous = before.tags;
  let tags: Record<string, string> = change.replace ? {} : { ...previous };
  for (const key of change.remove) delete tags[key];
  tags = { ...tags, ...change.set };
  if (sameTags(tags, previous)) return { sessionId: id, tags: previous, previous, changed: false };
  await store.setTags(id, tags);
  const after = await store.info(id);
  if (after === null) {
    throw new CkptError(
      'CONFLICT',
      `session ${JSON.stringify(id)} was deleted while its tags were being changed.`,
      { details: { sessionId: id } },
    );
  }
  const written =
    after.head !== before.head || after.updatedAt.getTime() !== before.updatedAt.getTime();
  if (written && !change.replace) {
    throw new CkptError(
      'CONFLICT',
      `session ${JSON.stringify(id)} was written while its tags were being changed (head ${before.head}, now ${after.head}); had that checkpoint tags, this change, made to the tags read before it, replaced them, or they replaced this change. Its tags now: ${tagsOrNone(after.tags)}; check them, and run the command again if they are not what they should be.`,
      { details: { sessionId: id } },
    );
  }
  if (!sameTags(after.tags, tags)) {
    throw new CkptError(
      'CONFLICT',
      `the tags of session ${JSON.stringify(id)} were changed by another writer right after this change, which wrote ${tagsOrNone(tags)}. Its tags now: ${tagsOrNone(after.tags)}; check them, and run the command again if they are not what they should be.`,
      { details: { sessionId: id } },
    );
  }
  return { sessionId: id, tags: after.tags, previous, changed: true };
}
