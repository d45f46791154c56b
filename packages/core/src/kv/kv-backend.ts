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
  ForkInput,
  ForkResult,
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
  rangesPrune,
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

  const read = async (id: string): Promise<Snapshot | null> => {
    const raw = await kv.get(sessionKey(id));
    return raw === undefined ? null : { raw, rec: JSON.parse(raw) as SessionRecord };
  };

  /** Read the session with no pending write, finishing one left by another caller. */
  const readSettled = async (id: string): Promise<Snapshot | null> => {
    for (let race = 0; race < MAX_RACES; race++) {
      const snap = await read(id);
      if (snap === null || snap.rec.pending === null) return snap;
      await finishPending(id, snap);
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
        const snap = await readSettled(id);
        const rec = snap?.rec ?? null;
        if (rec !== null && input.idempotencyKey !== undefined) {
          const seen = await kv.get(idemPrefix(id, rec.gen) + input.idempotencyKey);
          if (seen !== undefined) {
            const seq = Number(seen);
            // The key was recorded by a write newer than the record read above: read again.
            if (seq > rec.last) continue;
            const body = rangesHas(rec.seqs, seq) ? await readBody(id, rec, seq) : null;
            return { status: 'replayed', seq, checkpoint: body };
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
        };
        const raw = JSON.stringify(next);
        if (await compareAndSet(sessionKey(id), snap?.raw ?? null, raw)) {
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
        return rangesHas(rec.seqs, target) ? body(target) : null;
      });
    },

    async loadByKey(sessionId, idempotencyKey): Promise<StoredCheckpoint | null> {
      for (let race = 0; race < MAX_RACES; race++) {
        const found = await readAsOfOneRecord(sessionId, null, async (rec, body) => {
          // A write in flight has not recorded its key yet; its record names it.
          if (rec.pending?.key === idempotencyKey) return body(rec.pending.seq);
          const seen = await kv.get(idemPrefix(sessionId, rec.gen) + idempotencyKey);
          if (seen === undefined) return null;
          const seq = Number(seen);
          // Recorded by a write newer than the record read: read again.
          if (seq > rec.last) return RACED;
          return rangesHas(rec.seqs, seq) ? body(seq) : null;
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
            out.push({
              seq,
              parent: found.parent,
              metadata: found.metadata,
              createdAt: found.createdAt,
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
        if ((await kv.get(sessionKey(input.newId))) !== undefined) return { status: 'exists' };
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
        if (!(await compareAndSet(sessionKey(input.newId), null, JSON.stringify(created)))) {
          return { status: 'exists' };
        }
        return { status: 'done', seq: at };
      }
      throw tooManyRaces(input.sessionId);
    },

    async prune(sessionId, keepLast) {
      for (let race = 0; race < MAX_RACES; race++) {
        const snap = await readSettled(sessionId);
        if (snap === null) return 0;
        const { rec } = snap;
        let { kept, removed } = rangesPrune(rec.seqs, keepLast, rec.head);
        if (removed.length === 0) return 0;
        let needy = rec.needy;
        if (needy !== undefined) {
          // Kept as well: what the kept checkpoints need. The bodies read for it belong to the
          // record read above; a change to it since fails the compare-and-set below, and the
          // prune starts over.
          const needing = needy;
          let vanished = false;
          const needsOf = async (seq: number) => {
            if (!rangesHas(needing, seq) || !rangesHas(rec.seqs, seq)) return [];
            const body = await readBody(sessionId, rec, seq);
            if (body === null) vanished = true;
            return body?.needs ?? [];
          };
          const keep = await closeOverNeedsAsync(rangesAscending(kept, null, Infinity), needsOf);
          if (vanished) continue;
          removed = removed.filter((seq) => !keep.has(seq));
          if (removed.length === 0) return 0;
          const all = (ranges: SeqRanges) => rangesAscending(ranges, null, Infinity);
          kept = rangesFrom(all(rec.seqs).filter((seq) => keep.has(seq)));
          const stillNeeding = all(needing).filter((seq) => keep.has(seq));
          needy = stillNeeding.length > 0 ? rangesFrom(stillNeeding) : undefined;
        }
        const { needy: _, ...rest } = rec;
        const next = { ...rest, seqs: kept, ...(needy === undefined ? {} : { needy }) };
        if (await compareAndSet(sessionKey(sessionId), snap.raw, JSON.stringify(next))) {
          // The record no longer names these bodies; deleting them only frees space.
          for (const seq of removed) await kv.delete(bodyKey(sessionId, rec.gen, seq));
          return removed.length;
        }
      }
      throw tooManyRaces(sessionId);
    },

    async delete(sessionId) {
      const snap = await read(sessionId);
      if (snap === null) return false;
      if (!(await kv.delete(sessionKey(sessionId)))) return false;
      await dropIncarnation(sessionId, snap.rec);
      return true;
    },

    async exportCheckpoints(sessionId, { afterSeq, limit }) {
      return readAsOfOneRecord(sessionId, [], async (rec, body) => {
        const out = [];
        for (const seq of rangesAscending(rec.seqs, afterSeq, limit)) {
          const found = await body(seq);
          if (found !== null) out.push({ ...found, needs: found.needs ?? [] });
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
      let snap = await read(id);
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
      const raw = JSON.stringify(record);
      for (let race = 0; race < MAX_RACES; race++) {
        if (await compareAndSet(sessionKey(id), snap?.raw ?? null, raw)) {
          if (snap !== null) await dropIncarnation(id, snap.rec);
          return 'imported';
        }
        snap = await read(id);
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
        if (raw === undefined) continue;
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
