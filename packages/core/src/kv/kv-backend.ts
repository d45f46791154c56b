/**
 * `kvBackend(kv)`: the whole CheckpointBackend on a KvStore of get/set/delete (and, when
 * present, compareAndSet and list), laid out as layout.ts says.
 *
 * The session record is the single commit point: an append stages its body under a key of its
 * own, then swaps the record (compare-and-set) to name the new seq as head with the staged key
 * as `pending`, then copies the body home and clears `pending`. Any caller that meets a
 * pending write finishes it first. A crash at any step leaves the record naming only bodies
 * that can be read, so a session is never unreadable and its head never dangles.
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
} from '../adapter/backend.js';
import { closeOverNeedsAsync } from '../adapter/needs.js';
import {
  compareCodePoints,
  compareSessionsNewestFirst,
  prefixUpperBound,
} from '../adapter/order.js';
import { CkptError, invalidArgument } from '../values/errors.js';
import { checkOptions, describe } from '../values/validate.js';
import { conformingKv } from './conformance.js';
import type { KvStore } from './kv-store.js';
import {
  type Body,
  kvKeys,
  makeBody,
  parseBody,
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

/** Options of `kvBackend`. */
export interface KvBackendOptions {
  /** Prefix of every key written; default `ckpt:`. */
  prefix?: string;
}

/** A session record and the exact text it was read as, which a compare-and-set must match. */
interface Snapshot {
  raw: string;
  rec: SessionRecord;
}

/**
 * A session's key as read: its record (null when there is no session), and the text that a
 * compare-and-set creating the session must expect (null: no key; else a tombstone's text).
 */
interface Slot {
  snap: Snapshot | null;
  expected: string | null;
}

/** A stored checkpoint: a body with its pin, as the record names it. */
function withPin(rec: SessionRecord, body: Body): StoredCheckpoint & Body {
  const pin = rec.pins?.find(([seq]) => seq === body.seq);
  return { ...body, pinned: pin !== undefined, pinNote: pin?.[1] ?? null };
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
  const prefix = checkPrefix(checkOptions(options, 'options', ['prefix']).prefix);
  const keys = kvKeys(prefix);
  const {
    session: sessionKey,
    body: bodyKey,
    staged: stagedKey,
    idempotencyPrefix: idemPrefix,
  } = keys;
  const stateKey = (scope: string, key: string) => keys.statePrefix(scope) + key;

  const compareAndSet = async (key: string, expected: string | null, value: string) => {
    if (kv.compareAndSet) return kv.compareAndSet(key, expected, value);
    // Without compareAndSet only one writer per session is supported; this check still
    // catches a stale record within that one writer.
    const current = (await kv.get(key)) ?? null;
    if (current !== expected) return false;
    await kv.set(key, value);
    return true;
  };

  const readSlot = async (id: string): Promise<Slot> => {
    const raw = await kv.get(sessionKey(id));
    if (raw === undefined) return { snap: null, expected: null };
    if (raw === TOMBSTONE) return { snap: null, expected: raw };
    return { snap: { raw, rec: JSON.parse(raw) as SessionRecord }, expected: raw };
  };

  const read = async (id: string): Promise<Snapshot | null> => (await readSlot(id)).snap;

  /** Read the session with no pending write, finishing one left by another caller. */
  const readSettledSlot = async (id: string): Promise<Slot> => {
    for (let race = 0; race < MAX_RACES; race++) {
      const slot = await readSlot(id);
      if (slot.snap === null || slot.snap.rec.pending === null) return slot;
      await finishPending(id, slot.snap);
    }
    throw tooManyRaces(id);
  };

  const readSettled = async (id: string): Promise<Snapshot | null> =>
    (await readSettledSlot(id)).snap;

  /**
   * Change the session's record with `change` (given the settled record; null: leave it and
   * answer `unchanged`), by compare-and-set, again from a fresh read whenever it races.
   */
  const changeRecord = async <T>(
    id: string,
    absent: T,
    change: (rec: SessionRecord) => { next: SessionRecord; answer: T } | { unchanged: T },
  ): Promise<T> => {
    for (let race = 0; race < MAX_RACES; race++) {
      const snap = await readSettled(id);
      if (snap === null) return absent;
      const outcome = change(snap.rec);
      if ('unchanged' in outcome) return outcome.unchanged;
      if (await compareAndSet(sessionKey(id), snap.raw, JSON.stringify(outcome.next))) {
        return outcome.answer;
      }
    }
    throw tooManyRaces(id);
  };

  /** Copy a pending body home, record its idempotency key, clear `pending`. Safe to repeat. */
  const finishPending = async (id: string, snap: Snapshot, body?: string) => {
    const { rec } = snap;
    const pending = rec.pending!;
    const staged = body ?? (await kv.get(stagedKey(id, pending.nonce)));
    // A staged body is deleted only after `pending` was cleared, so when it is gone the
    // work is done and the compare-and-set below fails harmlessly. The body goes home only
    // where there is none yet: one already there is this same body, or what rewriteCheckpoint
    // made of it since, which a late finisher must not put back to the staged text.
    if (staged !== undefined) await compareAndSet(bodyKey(id, rec.gen, pending.seq), null, staged);
    if (pending.key !== null) {
      await kv.set(idemPrefix(id, rec.gen) + pending.key, String(pending.seq));
    }
    await compareAndSet(sessionKey(id), snap.raw, JSON.stringify({ ...rec, pending: null }));
    await kv.delete(stagedKey(id, pending.nonce));
  };

  const readBody = async (id: string, rec: SessionRecord, seq: number) => {
    let body: string | undefined;
    if (rec.pending?.seq === seq) body = await kv.get(stagedKey(id, rec.pending.nonce));
    body ??= await kv.get(bodyKey(id, rec.gen, seq));
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
      if (!vanished || (await kv.get(sessionKey(id))) === snap.raw) return result;
    }
    throw tooManyRaces(id);
  };

  /** Free what an incarnation of a session held, once no record names it any more. */
  const dropIncarnation = async (id: string, rec: SessionRecord) => {
    for (const [lo, hi] of rec.seqs) {
      for (let seq = lo; seq <= hi; seq++) await kv.delete(bodyKey(id, rec.gen, seq));
    }
    if (rec.pending) await kv.delete(stagedKey(id, rec.pending.nonce));
    if (kv.list) {
      for (const key of await listAll(idemPrefix(id, rec.gen))) await kv.delete(key);
    }
  };

  const toStored = (id: string, rec: SessionRecord): StoredSession => ({
    sessionId: id,
    head: rec.head,
    checkpoints: rangesCount(rec.seqs),
    forkedFrom: rec.forkedFrom,
    metadata: rec.metadata,
    createdAt: rec.createdAt,
    updatedAt: rec.updatedAt,
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

  return {
    name: 'kv',
    capabilities: {
      concurrentWriters: typeof kv.compareAndSet === 'function',
      listSessions: typeof kv.list === 'function',
      listStateKeys: typeof kv.list === 'function',
    },

    async append(input: AppendInput): Promise<AppendResult> {
      const id = input.sessionId;
      for (let race = 0; race < MAX_RACES; race++) {
        const { snap, expected } = await readSettledSlot(id);
        const rec = snap?.rec ?? null;
        if (rec !== null && input.idempotencyKey !== undefined) {
          const seen = await kv.get(idemPrefix(id, rec.gen) + input.idempotencyKey);
          if (seen !== undefined) {
            const seq = Number(seen);
            // The key was recorded by a write newer than the record read above: read again.
            if (seq > rec.last) continue;
            const body = rangesHas(rec.seqs, seq) ? await readBody(id, rec, seq) : null;
            return { status: 'replayed', seq, checkpoint: body && withPin(rec, body) };
          }
        }
        const head = rec?.head ?? null;
        if (input.expectedHead !== undefined && input.expectedHead !== head) {
          return { status: 'conflict', head };
        }
        const seq = (rec?.last ?? 0) + 1;
        const gen = rec?.gen ?? token();
        const nonce = token();
        // Only the needs stored as of the record this write replaces: the compare-and-set
        // below fails if a prune changed that record since.
        const needs = rec === null ? [] : input.needs.filter((n) => rangesHas(rec.seqs, n));
        const body = makeBody(
          { seq, parent: head, createdAt: input.now, ...(needs.length > 0 ? { needs } : {}) },
          input.data,
          input.metadata,
          input.transcript,
        );
        await kv.set(stagedKey(id, nonce), body);
        const needy = needs.length > 0 ? rangesAppend(rec?.needy ?? [], seq) : rec?.needy;
        const next: SessionRecord = {
          gen,
          head: seq,
          last: seq,
          seqs: rangesAppend(rec?.seqs ?? [], seq),
          forkedFrom: rec?.forkedFrom ?? null,
          metadata: input.metadata,
          createdAt: rec?.createdAt ?? input.now,
          updatedAt: input.now,
          pending: { seq, nonce, key: input.idempotencyKey ?? null },
          ...(needy === undefined ? {} : { needy }),
          ...(rec?.pins === undefined ? {} : { pins: rec.pins }),
        };
        const raw = JSON.stringify(next);
        if (await compareAndSet(sessionKey(id), expected, raw)) {
          await finishPending(id, { raw, rec: next }, body);
          return { status: 'written', seq, parent: head };
        }
        await kv.delete(stagedKey(id, nonce));
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
          // A write in flight has not recorded its key yet; its record names it.
          const pinned = async (seq: number) => {
            const found = await body(seq);
            return found === null ? null : withPin(rec, found);
          };
          if (rec.pending?.key === idempotencyKey) return pinned(rec.pending.seq);
          const seen = await kv.get(idemPrefix(sessionId, rec.gen) + idempotencyKey);
          if (seen === undefined) return null;
          const seq = Number(seen);
          // Recorded by a write newer than the record read: read again.
          if (seq > rec.last) return RACED;
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
        const snap = await readSettled(input.sessionId);
        if (snap === null) return { status: 'not_found', missing: 'session' };
        const { rec } = snap;
        if (input.expectedHead !== undefined && input.expectedHead !== rec.head) {
          return { status: 'conflict', head: rec.head };
        }
        const body = rangesHas(rec.seqs, input.seq)
          ? await readBody(input.sessionId, rec, input.seq)
          : null;
        if (body === null) return { status: 'not_found', missing: 'seq' };
        const next = { ...rec, head: input.seq, metadata: body.metadata, updatedAt: input.now };
        if (await compareAndSet(sessionKey(input.sessionId), snap.raw, JSON.stringify(next))) {
          return { status: 'done' };
        }
      }
      throw tooManyRaces(input.sessionId);
    },

    async fork(input: ForkInput): Promise<ForkResult> {
      for (let race = 0; race < MAX_RACES; race++) {
        const snap = await readSettled(input.sessionId);
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
          pending: null,
          ...(needy.length > 0 ? { needy: rangesFrom(needy) } : {}),
        };
        // The copies are the fork's own: no pin of the source comes with them.
        if (
          !(await compareAndSet(sessionKey(input.newId), target.expected, JSON.stringify(created)))
        ) {
          return { status: 'exists' };
        }
        return { status: 'done', seq: at };
      }
      throw tooManyRaces(input.sessionId);
    },

    async prune(sessionId, rule, dryRun = false) {
      for (let race = 0; race < MAX_RACES; race++) {
        const snap = await readSettled(sessionId);
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
        if (await compareAndSet(sessionKey(sessionId), snap.raw, JSON.stringify(next))) {
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
      return changeRecord<boolean>(sessionId, false, (rec) => {
        const pins = (rec.pins ?? []).filter(([pinned]) => pinned !== seq);
        if (pins.length === (rec.pins ?? []).length) return { unchanged: false };
        const { pins: _, ...rest } = rec;
        return { next: pins.length > 0 ? { ...rest, pins } : rest, answer: true };
      });
    },

    async deleteIdle(sessionId, idleBefore, dryRun): Promise<DeleteIdleResult> {
      for (let race = 0; race < MAX_RACES; race++) {
        const snap = await readSettled(sessionId);
        if (snap === null) return { status: 'kept' };
        const { rec } = snap;
        if (rec.updatedAt >= idleBefore || (rec.pins?.length ?? 0) > 0) return { status: 'kept' };
        const checkpoints = rangesCount(rec.seqs);
        if (dryRun) return { status: 'deleted', checkpoints };
        // Only while the record is still the one read: a write since keeps the session.
        if (await compareAndSet(sessionKey(sessionId), snap.raw, TOMBSTONE)) {
          await dropIncarnation(sessionId, rec);
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
      await dropIncarnation(sessionId, snap.rec);
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
      // Settled first: a pending append's body is home before it is compared, and a finisher
      // that comes late leaves a body it finds home as it is (see finishPending).
      const snap = await readSettled(sessionId);
      if (snap === null || !rangesHas(snap.rec.seqs, seq)) return false;
      const key = bodyKey(sessionId, snap.rec.gen, seq);
      const body = await kv.get(key);
      if (body === undefined) return false;
      const stored = parseBody(body);
      if (stored.data !== from.data || stored.transcript !== from.transcript) return false;
      // Only while the body is still the one compared: a prune, delete or another rewrite
      // that lands meanwhile wins, and a removed body is never written back.
      return compareAndSet(key, body, withValues(body, to.data, to.transcript));
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
        pending: null,
      };
      const needy = checkpoints.filter((cp) => cp.needs.length > 0).map((cp) => cp.seq);
      if (needy.length > 0) record.needy = rangesFrom(needy);
      const pins = checkpoints.filter((cp) => cp.pinned).map((cp) => [cp.seq, cp.pinNote]);
      if (pins.length > 0) record.pins = pins as [number, string | null][];
      const raw = JSON.stringify(record);
      for (let race = 0; race < MAX_RACES; race++) {
        if (await compareAndSet(sessionKey(id), expected, raw)) {
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
    }: {
      after: SessionPosition | null;
      limit: number;
      prefix: string;
    }) {
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

    stateGet: (scope, key) => kv.get(stateKey(scope, key)),
    stateSet: (scope, key, value) => kv.set(stateKey(scope, key), value),
    stateDelete: (scope, key) => kv.delete(stateKey(scope, key)),
    stateCompareAndSet: (scope, key, expected, value) =>
      compareAndSet(stateKey(scope, key), expected, value),

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
}

function tooManyRaces(sessionId: string): CkptError {
  return new CkptError(
    'BACKEND',
    `kv backend: session ${JSON.stringify(sessionId)} changed under ${MAX_RACES} attempts in a row; retry later.`,
  );
}
