/**
 * What each change to a store does and answers: the values `ckpt rollback|fork|prune|delete|
 * state … --json` print and the studio's API returns, made in one place so that both stay the
 * same.
 */
import type { CheckpointStore, JsonValue } from '@ckpt/core';

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
