/**
 * `kvBackend(kv)`: the whole CheckpointBackend on a KvStore of get/set/delete (and, when
 * present, a conditional write and list), laid out as layout.ts says.
 *
 * The session record is the single commit point. An append reads the record, creates its body
 * at the next seq (a write only if the key is absent), and swaps the record to name it: three
 * calls. A body at the next seq that the record does not name yet is another caller's append
 * in flight, or one cut short: a caller that meets it commits it for its writer when it was
 * written against the very record read (see `fits`), else takes its place, and goes on. A
 * crash at any step leaves the record naming only bodies that can be read, so a session is
 * never unreadable and its head never dangles.
 *
 * Tags are on the record, and in an index of their own (tag-index.ts) whose entries every write
 * that changes a session's tags or updatedAt writes before it swaps the record, and removes
 * after: an append writes those of the record it would make before its body, since whoever
 * commits the body makes that record.
 */
import type {
  AppendInput,
  AppendResult,
  CheckpointBackend,
  DeleteIdleResult,
  ForkInput,
  ForkResult,
  PinResult,
  RollbackInput,
  RollbackResult,
  SessionPosition,
  StoredCheckpoint,
  StoredLineageEntry,
  StoredSession,
  Tags,
} from '../adapter/backend.js';
import { closeOverNeedsAsync } from '../adapter/needs.js';
import {
  compareCodePoints,
  compareSessionsNewestFirst,
  prefixUpperBound,
} from '../adapter/order.js';
import { pruneSideBySide } from '../adapter/prune-batch.js';
import { CkptError, invalidArgument } from '../values/errors.js';
import { checkOptions, describe } from '../values/validate.js';
import { type Cell, cellsOf } from './cells.js';
import { conformingKv } from './conformance.js';
import { kvChangeLog } from './kv-change-log.js';
import { DEFAULT_POLL_MS, pollingChangeLog } from './kv-change-poll.js';
import type { KvStore } from './kv-store.js';
import {
  type Body,
  type BodyHeader,
  kvKeys,
  makeBody,
  parseBody,
  parseHeader,
  type RecordChange,
  type SessionRecord,
  TOMBSTONE,
  token,
  withValues,
} from './layout.js';
import {
  rangesAppend,
  rangesAscending,
  rangesCount,
  rangesDescending,
  rangesFrom,
  rangesHas,
  type SeqRanges,
} from './seq-ranges.js';
import { sameTags, tagFields, tagIndex, untagged } from './tag-index.js';

/** Options of `kvBackend`. */
export interface KvBackendOptions {
  /** Prefix of every key written; default `ckpt:`. */
  prefix?: string;
  /**
   * For a KV store without `changes()` (and with `list()`): give `watch()` by polling, every
   * `everyMs` (default 1,000), reading the whole catalog and every state value at each poll.
   * Weaker than a log: changes between two polls come as one event a session, and a cursor
   * works only in the process that made it (elsewhere, EXPIRED). See the core README.
   */
  watchByPolling?: boolean | { everyMs?: number };
}

/** A session record and the cell it was read as, which a conditional write must present. */
interface Snapshot {
  cell: Cell;
  rec: SessionRecord;
}

/**
 * A session's key as read: its record (null when there is no session), and what a conditional
 * write creating the session must present (null: no key; else a tombstone's cell).
 */
interface Slot {
  snap: Snapshot | null;
  expected: Cell | null;
}

/**
 * A record's text, as written by a change of kind `change` (which a store's log of its writes
 * shows watchers): with a fresh `rev`, so that it never equals the text of an earlier one.
 */
function recordText(rec: SessionRecord, change: RecordChange, rev = token()): string {
  return JSON.stringify({ ...rec, change, rev });
}

/**
 * Whether an append's body at the session's next seq can be committed to `rec` for its writer:
 * only when the writer read this very record, so that all it checked (the head it expected,
 * its key not yet used, the needs stored) still holds. Once the record changes, the body can
 * never be committed, and the next append takes its place.
 */
function fits(header: BodyHeader, rec: SessionRecord): header is BodyHeader & { nonce: string } {
  return (
    header.nonce !== undefined &&
    rec.rev !== undefined &&
    header.base === rec.rev &&
    header.seq === rec.last + 1
  );
}

/** A stored checkpoint: a body with its pin, as the record names it. */
function withPin(rec: SessionRecord, body: Body): StoredCheckpoint & Body {
  const pin = rec.pins?.find(([seq]) => seq === body.seq);
  return { ...body, pinned: pin !== undefined, pinNote: pin?.[1] ?? null };
}

/**
 * How watchers poll a KV store without a log of its writes, as `watchByPolling` asks; undefined
 * for no polling.
 */
function checkPolling(given: unknown, kv: KvStore): number | undefined {
  if (given === undefined || given === false) return undefined;
  const { everyMs = DEFAULT_POLL_MS } =
    given === true
      ? {}
      : checkOptions(given as { everyMs?: unknown }, 'watchByPolling', ['everyMs'], 'kvBackend()');
  if (
    given === null ||
    typeof everyMs !== 'number' ||
    !(everyMs > 0) ||
    !Number.isFinite(everyMs)
  ) {
    throw invalidArgument(
      'watchByPolling',
      `watchByPolling must be true, false or { everyMs } with a positive number of milliseconds, got ${describe(given === null ? given : everyMs)}.`,
    );
  }
  if (kv.changes) {
    throw invalidArgument(
      'watchByPolling',
      'watchByPolling is for a KV store without changes(): this one keeps a log of its writes, which watch() reads with every change and none missed; leave watchByPolling out.',
    );
  }
  if (!kv.list) {
    throw invalidArgument(
      'watchByPolling',
      'watchByPolling needs a KV store with list(): each poll lists the session records and state keys to read them.',
    );
  }
  return everyMs;
}

function checkPrefix(prefix: unknown = 'ckpt:'): string {
  if (typeof prefix !== 'string') {
    throw invalidArgument('prefix', `prefix must be a string, got ${describe(prefix)}.`);
  }
  return prefix;
}

// Bounds a compare-and-set loop; each lost race means another caller made progress.
const MAX_RACES = 10_000;
/** A read that must start again from a newer record. */
const RACED = Symbol('raced');

/** A CheckpointBackend on any `KvStore`. */
export function kvBackend(given: KvStore, options?: KvBackendOptions): CheckpointBackend {
  const kv = conformingKv(given);
  const cells = cellsOf(kv);
  const opts = checkOptions(options, 'options', ['prefix', 'watchByPolling'], 'kvBackend()');
  const prefix = checkPrefix(opts.prefix);
  const pollMs = checkPolling(opts.watchByPolling, kv);
  const keys = kvKeys(prefix);
  const { session: sessionKey, body: bodyKey, idempotencyPrefix: idemPrefix } = keys;
  const stateKey = (scope: string, key: string) => keys.statePrefix(scope) + key;
  const index = tagIndex(kv, keys);

  const readSlot = async (id: string): Promise<Slot> => {
    const cell = await cells.read(sessionKey(id));
    if (cell === undefined) return { snap: null, expected: null };
    if (cell.value === TOMBSTONE) return { snap: null, expected: cell };
    return { snap: { cell, rec: JSON.parse(cell.value) as SessionRecord }, expected: cell };
  };

  const read = async (id: string): Promise<Snapshot | null> => (await readSlot(id)).snap;

  /**
   * Change the session's record with `change` (given the settled record; null: leave it and
   * answer `unchanged`), by compare-and-set, again from a fresh read whenever it races; `kind`
   * is the kind of change the write is.
   */
  const changeRecord = async <T>(
    id: string,
    kind: RecordChange,
    absent: T,
    change: (rec: SessionRecord) => { next: SessionRecord; answer: T } | { unchanged: T },
  ): Promise<T> => {
    for (let race = 0; race < MAX_RACES; race++) {
      const snap = await read(id);
      if (snap === null) return absent;
      const outcome = change(snap.rec);
      if ('unchanged' in outcome) return outcome.unchanged;
      if (await cells.swap(sessionKey(id), snap.cell, recordText(outcome.next, kind))) {
        return outcome.answer;
      }
    }
    throw tooManyRaces(id);
  };

  /**
   * The seq that an append with idempotency key `key` wrote, as of `rec`: null when none did,
   * RACED when the key names a write newer than `rec` (read the record again).
   */
  const seqOfKey = async (
    id: string,
    rec: SessionRecord,
    key: string,
  ): Promise<number | null | typeof RACED> => {
    // The last write's key has no `i:` entry yet.
    if (rec.tip?.key === key) return rec.tip.seq;
    const seen = await kv.get(idemPrefix(id, rec.gen) + key);
    if (seen === undefined) return null;
    const seq = Number(seen);
    return seq > rec.last ? RACED : seq;
  };

  /**
   * Commit the append whose body (with `header`) sits at `rec`'s next seq, by swapping the
   * record read as `from` (null: the session is new). The last write's idempotency key goes
   * under `i:` first, for the record that names it as the last write is about to be replaced.
   */
  const commit = async (
    id: string,
    from: Cell | null,
    rec: SessionRecord | null,
    gen: string,
    header: BodyHeader & { nonce: string },
    metadata: string,
  ): Promise<boolean> => {
    if (rec?.tip?.key !== undefined) {
      await kv.set(idemPrefix(id, rec.gen) + rec.tip.key, String(rec.tip.seq));
    }
    const { seq, createdAt } = header;
    const needy = header.needs !== undefined ? rangesAppend(rec?.needy ?? [], seq) : rec?.needy;
    const next: SessionRecord = {
      gen,
      head: seq,
      last: seq,
      seqs: rangesAppend(rec?.seqs ?? [], seq),
      forkedFrom: rec?.forkedFrom ?? null,
      metadata,
      createdAt: rec?.createdAt ?? createdAt,
      updatedAt: createdAt,
      tip: { seq, nonce: header.nonce, ...(header.key === undefined ? {} : { key: header.key }) },
      ...(needy === undefined ? {} : { needy }),
      ...(rec?.pins === undefined ? {} : { pins: rec.pins }),
      ...tagFields(header.tags ?? rec?.tags, header.nonce),
    };
    if (!(await cells.swap(sessionKey(id), from, recordText(next, 'checkpoint')))) return false;
    // The new record's entries were written with its body (see append); the old one's go.
    if (rec !== null) await index.remove(index.entriesOf(id, rec));
    return true;
  };

  /**
   * The tag index's entries of the record that committing the body with `header` onto `rec`
   * (null: no session) makes, as `commit` makes it.
   */
  const entriesOfCommit = (
    id: string,
    rec: SessionRecord | null,
    header: BodyHeader & { nonce: string },
  ): string[] =>
    index.entriesOf(id, {
      ...tagFields(header.tags ?? rec?.tags, header.nonce),
      updatedAt: header.createdAt,
    });

  /**
   * Swap the session's record from `from` (holding `prev`; null: none) to `next`, written as
   * `text`, the tag index in step (see tag-index.ts): when `next` stands for other entries than
   * `prev`, they are written before the swap, and `prev`'s are removed after it (or `next`'s,
   * when it failed). A write that changes tags or updatedAt gives `next` a fresh token.
   */
  const swapRecord = async (
    id: string,
    from: Cell | null,
    prev: SessionRecord | null,
    next: SessionRecord,
    text: string,
  ): Promise<boolean> => {
    const moved = next.tagged !== prev?.tagged;
    const entries = moved ? index.entriesOf(id, next) : [];
    await index.write(entries);
    if (!(await cells.swap(sessionKey(id), from, text))) {
      await index.remove(entries);
      return false;
    }
    if (moved && prev !== null) await index.remove(index.entriesOf(id, prev));
    return true;
  };

  /** `rec` with `tags` in place of its own, under a fresh token (see tag-index.ts). */
  const retagged = (rec: SessionRecord, tags: Tags | undefined = rec.tags): SessionRecord => ({
    ...untagged(rec),
    ...tagFields(tags, token()),
  });

  const readBody = async (id: string, rec: SessionRecord, seq: number) => {
    const body = await kv.get(bodyKey(id, rec.gen, seq));
    return body === undefined ? null : parseBody(body);
  };

  /**
   * Read bodies the session's record names, all as of one record. A prune or delete that
   * runs meanwhile changes the record first and then removes bodies, so a named body can
   * vanish under the read; the read then starts again from the record as it is now, rather
   * than answering with a mix of two states (such as a head without its checkpoint).
   */
  const readAsOfOneRecord = async <T>(
    id: string,
    absent: T,
    readBodies: (rec: SessionRecord, body: (seq: number) => Promise<Body | null>) => Promise<T>,
  ): Promise<T> => {
    for (let race = 0; race < MAX_RACES; race++) {
      const snap = await read(id);
      if (snap === null) return absent;
      let vanished = false;
      const result = await readBodies(snap.rec, async (seq) => {
        const body = await readBody(id, snap.rec, seq);
        if (body === null) vanished = true;
        return body;
      });
      // An unchanged record means nothing vanished under this read: the answer stands.
      if (!vanished || (await kv.get(sessionKey(id))) === snap.cell.value) return result;
    }
    throw tooManyRaces(id);
  };

  /** Free what an incarnation of a session held, once no record names it any more. */
  const dropIncarnation = async (id: string, rec: SessionRecord) => {
    for (const [lo, hi] of rec.seqs) {
      for (let seq = lo; seq <= hi; seq++) await kv.delete(bodyKey(id, rec.gen, seq));
    }
    // The body of an append that was cut short before its record named it.
    await kv.delete(bodyKey(id, rec.gen, rec.last + 1));
    if (kv.list) {
      for (const key of await listAll(idemPrefix(id, rec.gen))) await kv.delete(key);
    }
  };

  /** Free what a session held once its record is gone: its incarnation and its tag entries. */
  const dropSession = async (id: string, rec: SessionRecord) => {
    await index.remove(index.entriesOf(id, rec));
    await dropIncarnation(id, rec);
  };

  /**
   * Whether the append whose body this call wrote at `mine`, but whose swap of the record
   * failed, was committed by another caller, as `rec` (read since) says. When it was not, it
   * never will be (the record changed since its body was written); its body is removed where
   * no write can reach its key any more, and is otherwise left for the next append to replace.
   */
  const writtenFor = async (
    id: string,
    rec: SessionRecord | null,
    mine: { gen: string; seq: number },
    nonce: string,
  ): Promise<boolean> => {
    const at = bodyKey(id, mine.gen, mine.seq);
    if (rec !== null && rec.gen === mine.gen) {
      if (rec.tip?.nonce === nonce) return true;
      if (rangesHas(rec.seqs, mine.seq)) {
        const body = await kv.get(at);
        return body !== undefined && parseHeader(body).nonce === nonce;
      }
      if (rec.last < mine.seq) return false;
    }
    // Its seq is behind the session's last and not stored (taken, then pruned), or its
    // generation is gone: nothing can name it.
    await kv.delete(at);
    return false;
  };

  const toStored = (id: string, rec: SessionRecord): StoredSession => ({
    sessionId: id,
    head: rec.head,
    checkpoints: rangesCount(rec.seqs),
    forkedFrom: rec.forkedFrom,
    metadata: rec.metadata,
    createdAt: rec.createdAt,
    updatedAt: rec.updatedAt,
    ...(rec.tags === undefined ? {} : { tags: rec.tags }),
  });

  const listAll = async (prefix: string): Promise<string[]> => {
    const keys: string[] = [];
    for (;;) {
      const after = keys[keys.length - 1];
      const batch = await kv.list!(
        prefix,
        after === undefined ? { limit: 1000 } : { after, limit: 1000 },
      );
      keys.push(...batch);
      if (batch.length < 1000) return keys;
    }
  };

  // The store's own log of its writes where it keeps one; else a poll, when asked for; else none,
  // and watch() is UNSUPPORTED.
  const changeLog = kv.changes
    ? kvChangeLog({ ...kv, changes: kv.changes }, keys)
    : pollMs !== undefined
      ? pollingChangeLog(kv, keys, listAll, pollMs)
      : undefined;

  const backend: CheckpointBackend = {
    name: 'kv',
    // As its methods show them (see the end), said here too so that a store calls it as it is.
    capabilities: {
      concurrentWriters: cells.atomic,
      listSessions: typeof kv.list === 'function',
      listStateKeys: typeof kv.list === 'function',
      watch: changeLog !== undefined,
      tags: true,
    },
    ...changeLog,

    async append(input: AppendInput): Promise<AppendResult> {
      const id = input.sessionId;
      const key = input.idempotencyKey;
      const nonce = token();
      /**
       * Where this call's body was written, while it may still be committed, and the tag
       * index's entries of the record committing it makes.
       */
      let mine: { gen: string; seq: number; parent: number | null; entries: string[] } | null =
        null;
      /** The tag index's entries this call wrote, for the records its bodies would make. */
      const indexed = new Set<string>();
      /**
       * `result`, once the entries this call wrote that stand for no record are removed: all but
       * `kept`, those of the record that committed its body. Only when it ends on an answer: a
       * body of it that was not committed by then never will be (see writtenFor).
       */
      const settle = async <T>(result: T, kept: readonly string[] = []): Promise<T> => {
        await index.remove([...indexed].filter((entry) => !kept.includes(entry)));
        return result;
      };
      for (let race = 0; race < MAX_RACES; race++) {
        const { snap, expected } = await readSlot(id);
        const rec = snap?.rec ?? null;
        if (mine !== null) {
          if (await writtenFor(id, rec, mine, nonce)) {
            return settle({ status: 'written', seq: mine.seq, parent: mine.parent }, mine.entries);
          }
          mine = null;
        }
        if (rec !== null && key !== undefined) {
          const seen = await seqOfKey(id, rec, key);
          if (seen === RACED) continue;
          if (seen !== null) {
            const body = rangesHas(rec.seqs, seen) ? await readBody(id, rec, seen) : null;
            return settle({
              status: 'replayed',
              seq: seen,
              checkpoint: body && withPin(rec, body),
            });
          }
        }
        const head = rec?.head ?? null;
        if (input.expectedHead !== undefined && input.expectedHead !== head) {
          return settle({ status: 'conflict', head });
        }
        const seq = (rec?.last ?? 0) + 1;
        // A new session's generation is this call's own, so nobody else writes under it.
        const gen = rec?.gen ?? token();
        // Only the needs stored as of the record this write replaces: the swap below fails if
        // a prune changed that record since.
        const needs = rec === null ? [] : input.needs.filter((n) => rangesHas(rec.seqs, n));
        /** This call's body header, written against the record of rev `base`. */
        const headerOn = (base: string | undefined) => ({
          seq,
          parent: head,
          createdAt: input.now,
          ...(needs.length > 0 ? { needs } : {}),
          nonce,
          ...(key === undefined ? {} : { key }),
          ...(base === undefined ? {} : { base }),
          ...(input.tags === undefined ? {} : { tags: input.tags }),
        });
        const bodyOn = (base: string | undefined) =>
          makeBody(headerOn(base), input.data, input.metadata, input.transcript);
        const at = bodyKey(id, gen, seq);
        // Before the body: once it is there, any caller may commit it (see fits), and the
        // record it makes must find its entries there.
        const entries = entriesOfCommit(id, rec, headerOn(undefined));
        await index.write(entries.filter((entry) => !indexed.has(entry)));
        for (const entry of entries) indexed.add(entry);
        if (rec === null) {
          await kv.set(at, bodyOn(undefined));
        } else if (!(await cells.swap(at, null, bodyOn(rec.rev)))) {
          // Another append's body is at this seq. One written against this very record is
          // committed for its writer (or for this call, from the round before); any other can
          // never be once the record has changed since it was written, so the record is
          // changed first and the body is then replaced with this call's own, written against
          // the changed record, which the next round commits.
          const found = await cells.read(at);
          if (found === undefined) continue;
          const other = parseHeader(found.value);
          if (fits(other, rec)) {
            if (other.nonce === nonce) {
              mine = { gen, seq, parent: other.parent, entries: entriesOfCommit(id, rec, other) };
            }
            const metadata = parseBody(found.value).metadata;
            if ((await commit(id, expected, rec, gen, other, metadata)) && mine !== null) {
              return settle({ status: 'written', seq, parent: other.parent }, mine.entries);
            }
            continue;
          }
          const rev = token();
          if (!(await cells.swap(sessionKey(id), expected, recordText(rec, 'quiet', rev)))) {
            continue;
          }
          if (await cells.swap(at, found, bodyOn(rev))) mine = { gen, seq, parent: head, entries };
          continue;
        }
        mine = { gen, seq, parent: head, entries };
        if (await commit(id, expected, rec, gen, headerOn(rec?.rev), input.metadata)) {
          return settle({ status: 'written', seq, parent: head }, entries);
        }
      }
      throw tooManyRaces(id);
    },

    async load(sessionId, seq): Promise<StoredCheckpoint | null> {
      return readAsOfOneRecord(sessionId, null, async (rec, body) => {
        const target = seq ?? rec.head;
        const found = rangesHas(rec.seqs, target) ? await body(target) : null;
        return found === null ? null : withPin(rec, found);
      });
    },

    async loadByKey(sessionId, idempotencyKey): Promise<StoredCheckpoint | null> {
      for (let race = 0; race < MAX_RACES; race++) {
        const found = await readAsOfOneRecord(sessionId, null, async (rec, body) => {
          const pinned = async (seq: number) => {
            const found = await body(seq);
            return found === null ? null : withPin(rec, found);
          };
          const seq = await seqOfKey(sessionId, rec, idempotencyKey);
          if (seq === null || seq === RACED) return seq;
          return rangesHas(rec.seqs, seq) ? pinned(seq) : null;
        });
        if (found !== RACED) return found;
      }
      throw tooManyRaces(sessionId);
    },

    async session(sessionId) {
      const snap = await read(sessionId);
      return snap === null ? null : toStored(sessionId, snap.rec);
    },

    async listCheckpoints(sessionId, { beforeSeq, limit }) {
      return readAsOfOneRecord(sessionId, [], async (rec, body) => {
        const out = [];
        for (const seq of rangesDescending(rec.seqs, beforeSeq, limit)) {
          const found = await body(seq);
          if (found !== null) {
            const { pinned, pinNote } = withPin(rec, found);
            out.push({
              seq,
              parent: found.parent,
              metadata: found.metadata,
              createdAt: found.createdAt,
              pinned,
              pinNote,
            });
          }
        }
        return out;
      });
    },

    async lineage(sessionId, { fromSeq, limit, transcript }) {
      return readAsOfOneRecord(sessionId, [], async (rec, body) => {
        const out: StoredLineageEntry[] = [];
        let seq: number | null = fromSeq ?? rec.head;
        while (seq !== null && out.length < limit && rangesHas(rec.seqs, seq)) {
          const found = await body(seq);
          if (found === null) break;
          out.push({
            seq,
            parent: found.parent,
            createdAt: found.createdAt,
            ...(transcript ? { transcript: found.transcript } : {}),
          });
          seq = found.parent;
        }
        return out;
      });
    },

    async rollback(input: RollbackInput): Promise<RollbackResult> {
      for (let race = 0; race < MAX_RACES; race++) {
        const snap = await read(input.sessionId);
        if (snap === null) return { status: 'not_found', missing: 'session' };
        const { rec } = snap;
        if (input.expectedHead !== undefined && input.expectedHead !== rec.head) {
          return { status: 'conflict', head: rec.head };
        }
        const body = rangesHas(rec.seqs, input.seq)
          ? await readBody(input.sessionId, rec, input.seq)
          : null;
        if (body === null) return { status: 'not_found', missing: 'seq' };
        const next = retagged({
          ...rec,
          head: input.seq,
          metadata: body.metadata,
          updatedAt: input.now,
        });
        const text = recordText(next, 'rollback');
        if (await swapRecord(input.sessionId, snap.cell, rec, next, text)) {
          return { status: 'done' };
        }
      }
      throw tooManyRaces(input.sessionId);
    },

    async fork(input: ForkInput): Promise<ForkResult> {
      for (let race = 0; race < MAX_RACES; race++) {
        const snap = await read(input.sessionId);
        if (snap === null) return { status: 'not_found', missing: 'session' };
        const { rec } = snap;
        const at = input.atSeq ?? rec.head;
        if (!rangesHas(rec.seqs, at)) return { status: 'not_found', missing: 'seq' };
        const target = await readSlot(input.newId);
        if (target.snap !== null) return { status: 'exists' };
        // Copy under a fresh generation, then publish with one compare-and-set: until then
        // the copies are invisible, so a crash half-way leaves no half-made session.
        const gen = token();
        const copied = new Map<number, Body>();
        /** Copy one stored checkpoint; null when it vanished (pruned or deleted meanwhile). */
        const copy = async (seq: number): Promise<Body | null> => {
          const body = await kv.get(bodyKey(input.sessionId, rec.gen, seq));
          if (body === undefined) return null;
          await kv.set(bodyKey(input.newId, gen, seq), body);
          const parsed = parseBody(body);
          copied.set(seq, parsed);
          return parsed;
        };
        let complete = true;
        for (let seq: number | null = at; seq !== null && rangesHas(rec.seqs, seq); ) {
          const parsed = await copy(seq);
          if (parsed === null) {
            complete = false; // start over
            break;
          }
          seq = parsed.parent;
        }
        if (complete && rec.needy !== undefined) {
          // What the copied checkpoints need, and what that needs, is copied too.
          await closeOverNeedsAsync(copied.keys(), async (seq) => {
            if (!rangesHas(rec.seqs, seq)) return [];
            const parsed = copied.get(seq) ?? (await copy(seq));
            if (parsed === null) complete = false;
            return parsed?.needs ?? [];
          });
        }
        if (!complete) continue;
        const needy = [...copied.values()].filter((b) => b.needs !== undefined).map((b) => b.seq);
        const created: SessionRecord = {
          gen,
          head: at,
          last: at,
          seqs: rangesFrom(copied.keys()),
          forkedFrom: { sessionId: input.sessionId, seq: at },
          metadata: copied.get(at)!.metadata,
          createdAt: input.now,
          updatedAt: input.now,
          ...(needy.length > 0 ? { needy: rangesFrom(needy) } : {}),
          ...tagFields(rec.tags, token()),
        };
        // The copies are the fork's own: no pin of the source comes with them; its tags do.
        const text = recordText(created, 'fork');
        if (!(await swapRecord(input.newId, target.expected, null, created, text))) {
          return { status: 'exists' };
        }
        return { status: 'done', seq: at };
      }
      throw tooManyRaces(input.sessionId);
    },

    // Each prune is its own compare-and-set: the batch sends them all at once.
    pruneBatch: (sessionIds, rule, dryRun) =>
      pruneSideBySide((id, r, dry) => backend.prune(id, r, dry), sessionIds, rule, dryRun),

    async prune(sessionId, rule, dryRun = false) {
      for (let race = 0; race < MAX_RACES; race++) {
        const snap = await read(sessionId);
        if (snap === null) return 0;
        const { rec } = snap;
        const all = (ranges: SeqRanges) => rangesAscending(ranges, null, Infinity);
        const newest = new Set(
          rule.keepLast === null ? [] : rangesDescending(rec.seqs, null, rule.keepLast),
        );
        const pinned = new Set(rec.pins?.map(([seq]) => seq));
        // Kept for their own sake: the head, pins, and those a rule given keeps. Only a
        // checkpoint that the other rules let go has its body read, for its age.
        const roots: number[] = [];
        let vanished = false;
        for (const seq of all(rec.seqs)) {
          let keep = seq === rec.head || pinned.has(seq) || newest.has(seq);
          if (!keep && rule.createdBefore !== null) {
            const body = await readBody(sessionId, rec, seq);
            if (body === null) {
              vanished = true;
              break;
            }
            keep = body.createdAt >= rule.createdBefore;
          }
          if (keep) roots.push(seq);
        }
        if (vanished) continue;
        let keep = new Set(roots);
        let needy = rec.needy;
        if (needy !== undefined) {
          // Kept as well: what the kept checkpoints need. The bodies read for it belong to the
          // record read above; a change to it since fails the compare-and-set below, and the
          // prune starts over.
          const needing = needy;
          const needsOf = async (seq: number) => {
            if (!rangesHas(needing, seq) || !rangesHas(rec.seqs, seq)) return [];
            const body = await readBody(sessionId, rec, seq);
            if (body === null) vanished = true;
            return body?.needs ?? [];
          };
          keep = await closeOverNeedsAsync(roots, needsOf);
          if (vanished) continue;
          const stillNeeding = all(needing).filter((seq) => keep.has(seq));
          needy = stillNeeding.length > 0 ? rangesFrom(stillNeeding) : undefined;
        }
        const removed = all(rec.seqs).filter((seq) => !keep.has(seq));
        if (removed.length === 0 || dryRun) return removed.length;
        const { needy: _, ...rest } = rec;
        const next = {
          ...rest,
          seqs: rangesFrom(all(rec.seqs).filter((seq) => keep.has(seq))),
          ...(needy === undefined ? {} : { needy }),
        };
        if (await cells.swap(sessionKey(sessionId), snap.cell, recordText(next, 'prune'))) {
          // The record no longer names these bodies; deleting them only frees space.
          for (const seq of removed) await kv.delete(bodyKey(sessionId, rec.gen, seq));
          return removed.length;
        }
      }
      throw tooManyRaces(sessionId);
    },

    async pin({ sessionId, seq, note }): Promise<PinResult> {
      return changeRecord<PinResult>(
        sessionId,
        'quiet',
        { status: 'not_found', missing: 'session' },
        (rec) => {
          if (!rangesHas(rec.seqs, seq)) {
            return { unchanged: { status: 'not_found', missing: 'seq' } };
          }
          const pins = (rec.pins ?? []).filter(([pinned]) => pinned !== seq);
          pins.push([seq, note]);
          pins.sort((a, b) => a[0] - b[0]);
          return { next: { ...rec, pins }, answer: { status: 'done' } };
        },
      );
    },

    async unpin(sessionId, seq) {
      return changeRecord<boolean>(sessionId, 'quiet', false, (rec) => {
        const pins = (rec.pins ?? []).filter(([pinned]) => pinned !== seq);
        if (pins.length === (rec.pins ?? []).length) return { unchanged: false };
        const { pins: _, ...rest } = rec;
        return { next: pins.length > 0 ? { ...rest, pins } : rest, answer: true };
      });
    },

    async deleteIdle(sessionId, idleBefore, dryRun): Promise<DeleteIdleResult> {
      for (let race = 0; race < MAX_RACES; race++) {
        const snap = await read(sessionId);
        if (snap === null) return { status: 'kept' };
        const { rec } = snap;
        if (rec.updatedAt >= idleBefore || (rec.pins?.length ?? 0) > 0) return { status: 'kept' };
        const checkpoints = rangesCount(rec.seqs);
        if (dryRun) return { status: 'deleted', checkpoints };
        // Only while the record is still the one read: a write since keeps the session.
        if (await cells.swap(sessionKey(sessionId), snap.cell, TOMBSTONE)) {
          await dropSession(sessionId, rec);
          return { status: 'deleted', checkpoints };
        }
      }
      throw tooManyRaces(sessionId);
    },

    async delete(sessionId) {
      const { snap, expected } = await readSlot(sessionId);
      if (snap === null) {
        // A tombstone is no session, but delete() clears it away all the same.
        if (expected !== null) await kv.delete(sessionKey(sessionId));
        return false;
      }
      if (!(await kv.delete(sessionKey(sessionId)))) return false;
      await dropSession(sessionId, snap.rec);
      return true;
    },

    async exportCheckpoints(sessionId, { afterSeq, limit }) {
      return readAsOfOneRecord(sessionId, [], async (rec, body) => {
        const out = [];
        for (const seq of rangesAscending(rec.seqs, afterSeq, limit)) {
          const found = await body(seq);
          if (found !== null) out.push({ ...withPin(rec, found), needs: found.needs ?? [] });
        }
        return out;
      });
    },

    async rewriteCheckpoint({ sessionId, seq, from, to }) {
      const snap = await read(sessionId);
      if (snap === null || !rangesHas(snap.rec.seqs, seq)) return false;
      const key = bodyKey(sessionId, snap.rec.gen, seq);
      const found = await cells.read(key);
      if (found === undefined) return false;
      const stored = parseBody(found.value);
      if (stored.data !== from.data || stored.transcript !== from.transcript) return false;
      // Only while the body is still the one compared: a prune, delete or another rewrite
      // that lands meanwhile wins, and a removed body is never written back.
      return cells.swap(key, found, withValues(found.value, to.data, to.transcript));
    },

    async importSession(input) {
      const id = input.sessionId;
      const { checkpoints } = input;
      let { snap, expected } = await readSlot(id);
      if (snap !== null && !input.replace) return 'exists';
      // Written under a fresh generation and published with one compare-and-set, as a fork
      // is: until then nothing of it can be read, and a crash half-way leaves no session.
      const gen = token();
      for (const cp of checkpoints) {
        const needs = cp.needs.length > 0 ? { needs: cp.needs } : {};
        const body = makeBody(
          { seq: cp.seq, parent: cp.parent, createdAt: cp.createdAt, ...needs },
          cp.data,
          cp.metadata,
          cp.transcript,
        );
        await kv.set(bodyKey(id, gen, cp.seq), body);
      }
      const record: SessionRecord = {
        gen,
        head: input.head,
        last: checkpoints.at(-1)!.seq,
        seqs: rangesFrom(checkpoints.map((cp) => cp.seq)),
        forkedFrom: input.forkedFrom,
        metadata: checkpoints.find((cp) => cp.seq === input.head)!.metadata,
        createdAt: input.createdAt,
        updatedAt: input.updatedAt,
      };
      const needy = checkpoints.filter((cp) => cp.needs.length > 0).map((cp) => cp.seq);
      if (needy.length > 0) record.needy = rangesFrom(needy);
      const pins = checkpoints.filter((cp) => cp.pinned).map((cp) => [cp.seq, cp.pinNote]);
      if (pins.length > 0) record.pins = pins as [number, string | null][];
      Object.assign(record, tagFields(input.tags, token()));
      // An import is a checkpoint to watchers, as on the memory backend.
      const raw = recordText(record, 'checkpoint');
      for (let race = 0; race < MAX_RACES; race++) {
        if (await swapRecord(id, expected, snap?.rec ?? null, record, raw)) {
          if (snap !== null) await dropIncarnation(id, snap.rec);
          return 'imported';
        }
        ({ snap, expected } = await readSlot(id));
        if (snap !== null && !input.replace) {
          for (const cp of checkpoints) await kv.delete(bodyKey(id, gen, cp.seq));
          return 'exists';
        }
      }
      throw tooManyRaces(id);
    },

    async sessions({
      after,
      limit,
      prefix,
      where = {},
    }: {
      after: SessionPosition | null;
      limit: number;
      prefix: string;
      where?: Tags;
    }) {
      if (Object.keys(where).length > 0) {
        const found = await index.list({ where, after, limit, prefix }, async (id) => {
          return (await read(id))?.rec ?? null;
        });
        return found.map(([id, rec]) => toStored(id, rec));
      }
      const all: StoredSession[] = [];
      for (const key of await listAll(keys.sessionsWithPrefix(prefix))) {
        const raw = await kv.get(key);
        if (raw === undefined || raw === TOMBSTONE) continue;
        all.push(toStored(keys.sessionIdOf(key), JSON.parse(raw) as SessionRecord));
      }
      all.sort(compareSessionsNewestFirst);
      const start =
        after === null ? 0 : all.findIndex((s) => compareSessionsNewestFirst(s, after) > 0);
      return start === -1 ? [] : all.slice(start, start + limit);
    },

    async setTags(sessionId, tags) {
      for (let race = 0; race < MAX_RACES; race++) {
        const snap = await read(sessionId);
        if (snap === null) return false;
        const { rec } = snap;
        if (sameTags(rec.tags, tags)) return true;
        // Not a change watchers are told of: the session's head and updatedAt stay.
        const next = retagged(rec, tags);
        if (await swapRecord(sessionId, snap.cell, rec, next, recordText(next, 'quiet'))) {
          return true;
        }
      }
      throw tooManyRaces(sessionId);
    },

    stateGet: (scope, key) => kv.get(stateKey(scope, key)),
    stateSet: (scope, key, value) => kv.set(stateKey(scope, key), value),
    stateDelete: (scope, key) => kv.delete(stateKey(scope, key)),
    stateCompareAndSet: (scope, key, expected, value) =>
      cells.swapValue(stateKey(scope, key), expected, value),

    async stateKeys(scope, { prefix, after, limit }) {
      const base = keys.statePrefix(scope);
      const found = await kv.list!(
        base + prefix,
        after === null ? { limit } : { after: base + after, limit },
      );
      return found.map((key) => key.slice(base.length));
    },

    async stateScopes({ after, limit }) {
      // The keys order escaped scopes, not scopes ('a b' comes before 'a' there): every scope
      // is found, a key each, and then put in order.
      const scopes: string[] = [];
      for (let from: string | undefined; ; ) {
        const [key] = await kv.list!(
          keys.states,
          from === undefined ? { limit: 1 } : { after: from, limit: 1 },
        );
        if (key === undefined) break;
        const scope = keys.scopeOf(key);
        scopes.push(scope);
        from = prefixUpperBound(keys.statePrefix(scope))!;
      }
      return scopes
        .filter((scope) => after === null || compareCodePoints(scope, after) > 0)
        .sort(compareCodePoints)
        .slice(0, limit);
    },

    async close() {
      await kv.close?.();
    },

    // Every key under the prefix is this backend's, and only `list` can find them all.
    ...(kv.list && {
      async destroy() {
        for (let after: string | undefined; ; ) {
          const batch = await kv.list!(prefix, {
            ...(after !== undefined && { after }),
            limit: 1000,
          });
          for (const key of batch) await kv.delete(key);
          if (batch.length < 1000) return;
          after = batch[batch.length - 1];
        }
      },
    }),

    ...(kv.errorHint && { errorHint: kv.errorHint }),
  };
  // A KV without list() finds no keys it did not name: the backend has no listings, and the
  // store's capabilities say so (see capabilitiesOf).
  if (typeof kv.list !== 'function') {
    delete backend.sessions;
    delete backend.stateKeys;
    delete backend.stateScopes;
  }
  return backend;
}

function tooManyRaces(sessionId: string): CkptError {
  return new CkptError(
    'BACKEND',
    `kv backend: session ${JSON.stringify(sessionId)} changed under ${MAX_RACES} attempts in a row; retry later.`,
  );
}
