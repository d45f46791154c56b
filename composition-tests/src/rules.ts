/**
 * The rules: what the framework reads after each generic operation, for every integration.
 * Each integration's README says the same in its own words.
 *
 * - Every operation leaves what the application sees now (`Reads.current`: LangGraph's
 *   `getState`, the Agents SDK's `getItems()` and `getItems(n)`, the AI SDK's `load` and the
 *   chat's entry in `list()`) exactly as it was, with these exceptions: a rollback shows the
 *   session as it was read when that checkpoint was its newest; a delete shows nothing.
 * - Removing operations (`prune` by count and by age, `sweep`, the `retention` option, and the
 *   `ckpt prune`/`sweep` commands and the studio's prune) may remove checkpoints the framework
 *   lists (LangGraph's `getStateHistory`): what it lists afterwards is a subset of what it
 *   listed, holding at least the `keepLast` newest, the latest and every pinned one, and each
 *   checkpoint still listed reads exactly as before (through the history and by its own id).
 *   For the Agents SDK and the AI SDK that means: no item and no message of the active branch is
 *   ever removed; what goes is what a rollback left behind (a timeline, a branch that is not
 *   active), and the AI SDK's branch picker still lists each message of the active branch.
 * - Every other operation leaves the history as it was: `fork`, `copyStore`, export then
 *   import, `reencode` (and `ckpt rekey`) with a new key, `pin` and `unpin`.
 * - A fork, read through the framework under its new id, reads as its source read at the fork
 *   point, and lists a subset of the source's checkpoints (the fork point's ancestors), each
 *   as the source lists it. Its times are its own. Where an integration's README says a fork
 *   reads otherwise, its driver says how (`asForked`): a LangGraph fork has no pending
 *   interrupt, since core's fork copies checkpoints and not the saver's pending writes.
 * - A copy (`copyStore`, `ckpt copy`) and an export imported into a fresh store (`exportStore`
 *   then `importStore`, `ckpt export` then `ckpt import`) read there exactly as the source
 *   reads, times included.
 * - A store whose codecs moved to a new key (the old one still given) reads the same after
 *   `reencode`, and so does a store given only the new key.
 * - A pin keeps its checkpoint through every removing operation.
 * - Writes made after any of these (and writes made under `retention`) read as the same writes
 *   read on a plain store that never removed anything (the twin), times aside; the listed
 *   checkpoints are a subset of the twin's once something was removed.
 */
import { expect } from 'vitest';
import type { Reads } from './driver.js';

/** `value` without its `stamp` properties (times), at any depth. */
export function withoutStamps(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutStamps);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value)
      .filter(([key]) => key !== 'stamp')
      .map(([key, v]) => [key, withoutStamps(v)]),
  );
}

/** The seqs of listed checkpoints, newest first. */
const seqsOf = (reads: Reads) =>
  Object.keys(reads.checkpoints)
    .map(Number)
    .sort((a, b) => b - a);

/**
 * `value` with each `parent` that `gone` says was removed as `removed`, at any depth: a
 * checkpoint whose parent was pruned still names it, as an id its reader no longer lists.
 */
function parentsRemoved(value: unknown, gone: (parent: unknown) => boolean): unknown {
  if (Array.isArray(value)) return value.map((v) => parentsRemoved(v, gone));
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === 'parent' && gone(v) ? 'removed' : parentsRemoved(v, gone),
    ]),
  );
}

/** A parent that a reader could not name as a listed checkpoint (see the drivers' reads). */
const unlisted = (parent: unknown) => typeof parent === 'string' && parent.startsWith('unknown ');

/**
 * `part` lists a subset of `whole`'s checkpoints, each read the same, but for a parent that
 * `part` no longer lists.
 */
function subsetOf(part: Reads, whole: Reads, what: string, compare = (v: unknown) => v): void {
  const listed = new Set(seqsOf(part));
  for (const seq of listed) {
    expect(seqsOf(whole), `${what}: checkpoint ${seq} appeared`).toContain(seq);
    const gone = (parent: unknown) =>
      unlisted(parent) || (typeof parent === 'number' && !listed.has(parent));
    const ours = parentsRemoved(part.checkpoints[seq], gone);
    const theirs = parentsRemoved(whole.checkpoints[seq], gone);
    expect(compare(ours), `${what}: checkpoint ${seq}`).toEqual(compare(theirs));
  }
}

/** Pin, unpin, reencode, a copy or an import read in the target: everything the same. */
export function unchanged(before: Reads, after: Reads, what: string): void {
  expect(after, what).toEqual(before);
}

/**
 * A removing operation: the same current reads; a subset of the listed checkpoints holding
 * the `keepLast` newest, the head and the pinned ones (`kept`), each read as before.
 */
export function removed(
  before: Reads,
  after: Reads,
  what: string,
  rule: { keepLast: number; kept: number[] },
): void {
  expect(after.current, `${what}: what the application reads now`).toEqual(before.current);
  subsetOf(after, before, what);
  const listed = seqsOf(before);
  const required = [...listed.slice(0, rule.keepLast), ...rule.kept].filter((seq) =>
    listed.includes(seq),
  );
  for (const seq of required) {
    expect(seqsOf(after), `${what}: checkpoint ${seq} must stay`).toContain(seq);
  }
}

/**
 * A fork, read under its new id: as the source read at the fork point (`asForked` says what its
 * README lets a fork read otherwise), times aside.
 */
export function forked(
  atFork: Reads['current'],
  source: Reads,
  fork: Reads,
  what: string,
  asForked: (reads: unknown) => unknown = (reads) => reads,
): void {
  expect(withoutStamps(fork.current), `${what}: the fork reads as its source did`).toEqual(
    withoutStamps(asForked(atFork)),
  );
  for (const seq of seqsOf(fork)) {
    expect(seqsOf(source), `${what}: checkpoint ${seq} appeared`).toContain(seq);
    expect(withoutStamps(fork.checkpoints[seq]), `${what}: checkpoint ${seq}`).toEqual(
      withoutStamps(asForked(source.checkpoints[seq])),
    );
  }
}

/** A rollback: reads as when the checkpoint was the newest (times aside); history unchanged. */
export function rolledBack(
  atSeq: Reads['current'],
  before: Reads,
  after: Reads,
  what: string,
): void {
  expect(withoutStamps(after.current), `${what}: reads as at that checkpoint`).toEqual(
    withoutStamps(atSeq),
  );
  expect(after.checkpoints, `${what}: lists the same checkpoints`).toEqual(before.checkpoints);
}

/**
 * After a write: as the same writes read on the twin, times aside; a subset of the twin's
 * checkpoints once something was removed from the session (`removedSome`).
 */
export function asTwin(real: Reads, twin: Reads, what: string, removedSome: boolean): void {
  expect(withoutStamps(real.current), `${what}: reads as the twin`).toEqual(
    withoutStamps(twin.current),
  );
  if (removedSome) subsetOf(real, twin, what, withoutStamps);
  else {
    expect(withoutStamps(real.checkpoints), `${what}: lists as the twin`).toEqual(
      withoutStamps(twin.checkpoints),
    );
  }
}
