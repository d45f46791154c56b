/**
 * The model-based case: random sequences of operations run against the backend and against
 * a plain reference model written here from the rules in core's README, and every answer is
 * compared.
 */
import {
  type BackendCapabilities,
  type CheckpointStore,
  compareCodePoints,
  isCkptError,
  type JsonValue,
} from '@ckpt/core';
import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import type { ContractContext } from '../harness.js';
import { allPages } from '../util.js';

interface ModelCheckpoint {
  seq: number;
  parent: number | null;
  data: JsonValue;
  transcript: JsonValue[];
  /** The stored checkpoints it named in `needs` when it was written, ascending. */
  needs: number[];
  /** Its pin's note (null: pinned without one); absent while not pinned. */
  pin?: string | null;
}

interface ModelSession {
  head: number;
  last: number;
  checkpoints: Map<number, ModelCheckpoint>;
  forkedFrom: { sessionId: string; seq: number } | null;
  keys: Map<string, number>;
  /** Not written for longer than a sweep's idleFor (imported with an old updatedAt). */
  idle: boolean;
}

/** The reference model: the store's semantics in the plainest code. */
class Model {
  readonly sessions = new Map<string, ModelSession>();

  /** `roots` and what they need, directly or through one another, in session `s`. */
  static needed(s: ModelSession, roots: number[]): Set<number> {
    const out = new Set<number>();
    const visit = (seq: number) => {
      if (out.has(seq)) return;
      out.add(seq);
      for (const n of s.checkpoints.get(seq)?.needs ?? []) visit(n);
    };
    for (const seq of roots) visit(seq);
    return out;
  }

  /** Prune session `s` to its `keepLast` newest, the head, the pinned and what they need. */
  static prune(s: ModelSession, keepLast: number): number {
    const seqs = [...s.checkpoints.keys()];
    const newest = seqs.sort((a, b) => b - a).slice(0, keepLast);
    const pinned = seqs.filter((seq) => s.checkpoints.get(seq)!.pin !== undefined);
    const keep = Model.needed(s, [...newest, s.head, ...pinned]);
    let count = 0;
    for (const seq of seqs) {
      if (!keep.has(seq)) {
        s.checkpoints.delete(seq);
        count++;
      }
    }
    return count;
  }

  history(id: string): number[] {
    const s = this.sessions.get(id);
    const out: number[] = [];
    for (let cp = s?.checkpoints.get(s.head); cp; ) {
      out.unshift(cp.seq);
      cp = cp.parent === null ? undefined : s!.checkpoints.get(cp.parent);
    }
    return out;
  }
}

interface Real {
  store: CheckpointStore;
  /** Prefix of this run's session ids, so that runs on one backend never meet. */
  run: string;
}

/** The id the backend sees for the model's session `id`. */
function full(r: Real, id: string): string {
  return `${r.run}/${id}`;
}

const IDS = ['a', 'A', 'a:b', '{a}', '%_*', '\u{1F99C}'];
const DAY = 86_400_000;
const KEYS = ['k1', 'k2'];

type Cmd = fc.AsyncCommand<Model, Real>;

/** Mostly a stored seq of the session, picked by `pick`; sometimes (or for none) one that is not. */
function pickSeq(s: ModelSession | undefined, pick: number): number {
  const seqs = s ? [...s.checkpoints.keys()] : [];
  return seqs.length > 0 && pick < 8 ? seqs[pick % seqs.length]! : pick + 1;
}

/** Commands over a few sessions with odd ids. */
function commandArbitraries(listSessions: boolean): fc.Arbitrary<Cmd>[] {
  const id = fc.constantFrom(...IDS);
  const json: fc.Arbitrary<JsonValue> = fc.jsonValue({ maxDepth: 2 }) as fc.Arbitrary<JsonValue>;

  class Checkpoint implements Cmd {
    constructor(
      readonly id: string,
      readonly data: JsonValue,
      readonly transcript: JsonValue[],
      readonly expect: 'any' | 'head' | 'stale' | 'absent',
      readonly key: string | undefined,
      readonly needs: number[],
    ) {}
    check = () => true;
    async run(m: Model, r: Real) {
      const s = m.sessions.get(this.id);
      const head = s?.head ?? null;
      const expectedHead =
        this.expect === 'any'
          ? undefined
          : this.expect === 'absent'
            ? null
            : this.expect === 'head'
              ? head
              : (head ?? 0) + 7;
      const replay = this.key === undefined ? undefined : s?.keys.get(this.key);
      let outcome: unknown;
      try {
        outcome = await r.store.checkpoint(full(r, this.id), this.data, {
          transcript: this.transcript,
          ...(expectedHead === undefined ? {} : { expectedHead }),
          ...(this.key === undefined ? {} : { idempotencyKey: this.key }),
          ...(this.needs.length === 0 ? {} : { needs: this.needs }),
        });
      } catch (err) {
        outcome = err;
      }
      if (replay !== undefined) {
        const stored = s!.checkpoints.get(replay);
        if (stored) {
          expect(outcome).toMatchObject({ seq: replay });
          expect((outcome as { data: unknown }).data).toEqual(stored.data);
        } else expect(isCkptError(outcome, 'CONFLICT')).toBe(true);
        return;
      }
      if (expectedHead !== undefined && expectedHead !== head) {
        expect(isCkptError(outcome, 'CONFLICT'), String(outcome)).toBe(true);
        return;
      }
      const session: ModelSession = s ?? {
        head: 0,
        last: 0,
        checkpoints: new Map(),
        forkedFrom: null,
        keys: new Map(),
        idle: false,
      };
      const seq = session.last + 1;
      expect(outcome).toMatchObject({ seq, parent: head });
      expect((outcome as { data: unknown }).data).toEqual(this.data);
      session.checkpoints.set(seq, {
        seq,
        parent: head,
        data: this.data,
        transcript: this.transcript,
        needs: [...new Set(this.needs)]
          .filter((n) => session.checkpoints.has(n))
          .sort((a, b) => a - b),
      });
      session.head = seq;
      session.last = seq;
      session.idle = false;
      if (this.key !== undefined) session.keys.set(this.key, seq);
      m.sessions.set(this.id, session);
    }
    toString() {
      return `checkpoint(${this.id}, expect=${this.expect}, key=${this.key}, needs=[${this.needs}])`;
    }
  }

  class Rollback implements Cmd {
    constructor(
      readonly id: string,
      readonly pick: number,
    ) {}
    check = () => true;
    async run(m: Model, r: Real) {
      const s = m.sessions.get(this.id);
      const seq = pickSeq(s, this.pick);
      const outcome = await r.store.rollback(full(r, this.id), seq).catch((err: unknown) => err);
      if (!s?.checkpoints.has(seq)) {
        expect(isCkptError(outcome, 'NOT_FOUND')).toBe(true);
        return;
      }
      expect(outcome).toBe(seq);
      s.head = seq;
      s.idle = false;
    }
    toString() {
      return `rollback(${this.id}, pick ${this.pick})`;
    }
  }

  class Fork implements Cmd {
    constructor(
      readonly id: string,
      readonly newId: string,
      readonly pick: number | undefined,
    ) {}
    check = () => true;
    async run(m: Model, r: Real) {
      const s = m.sessions.get(this.id);
      const seqs = s ? [...s.checkpoints.keys()] : [];
      const atSeq =
        this.pick === undefined
          ? undefined
          : seqs.length > 0
            ? seqs[this.pick % seqs.length]
            : this.pick + 1;
      const outcome = await r.store
        .fork(full(r, this.id), {
          newId: full(r, this.newId),
          ...(atSeq === undefined ? {} : { atSeq }),
        })
        .catch((err: unknown) => err);
      const at = atSeq ?? s?.head;
      if (!s || at === undefined || !s.checkpoints.has(at)) {
        expect(isCkptError(outcome, 'NOT_FOUND'), String(outcome)).toBe(true);
        return;
      }
      if (m.sessions.has(this.newId)) {
        expect(isCkptError(outcome, 'CONFLICT'), String(outcome)).toBe(true);
        return;
      }
      expect(outcome).toBe(full(r, this.newId));
      const copy: ModelSession = {
        head: at,
        last: at,
        checkpoints: new Map(),
        forkedFrom: { sessionId: this.id, seq: at },
        keys: new Map(),
        idle: false,
      };
      const chain: number[] = [];
      for (let cp = s.checkpoints.get(at); cp; ) {
        chain.push(cp.seq);
        cp = cp.parent === null ? undefined : s.checkpoints.get(cp.parent);
      }
      for (const seq of Model.needed(s, chain)) {
        const cp = s.checkpoints.get(seq);
        // A fork copies no pins.
        if (cp) copy.checkpoints.set(seq, { ...cp, pin: undefined });
      }
      m.sessions.set(this.newId, copy);
    }
    toString() {
      return `fork(${this.id} -> ${this.newId}, pick ${this.pick})`;
    }
  }

  class Prune implements Cmd {
    constructor(
      readonly id: string,
      readonly keepLast: number,
    ) {}
    check = () => true;
    async run(m: Model, r: Real) {
      const s = m.sessions.get(this.id);
      const removed = await r.store.prune(full(r, this.id), { keepLast: this.keepLast });
      if (!s) {
        expect(removed).toBe(0);
        return;
      }
      expect(removed).toBe(Model.prune(s, this.keepLast));
    }
    toString() {
      return `prune(${this.id}, ${this.keepLast})`;
    }
  }

  /** Pin (or, with `unpin`, unpin) a stored seq of the session, or one that is not stored. */
  class Pin implements Cmd {
    constructor(
      readonly id: string,
      readonly pick: number,
      readonly note: string | undefined,
      readonly unpin: boolean,
    ) {}
    check = () => true;
    async run(m: Model, r: Real) {
      const s = m.sessions.get(this.id);
      const seq = pickSeq(s, this.pick);
      const cp = s?.checkpoints.get(seq);
      if (this.unpin) {
        expect(await r.store.unpin(full(r, this.id), seq)).toBe(cp?.pin !== undefined);
        if (cp) cp.pin = undefined;
        return;
      }
      const outcome = await r.store
        .pin(full(r, this.id), seq, this.note === undefined ? undefined : { note: this.note })
        .catch((err: unknown) => err);
      if (!cp) {
        expect(isCkptError(outcome, 'NOT_FOUND'), String(outcome)).toBe(true);
        return;
      }
      expect(outcome).toBeUndefined();
      cp.pin = this.note ?? null;
    }
    toString() {
      return `${this.unpin ? 'unpin' : 'pin'}(${this.id}, pick ${this.pick}, note ${this.note})`;
    }
  }

  /** Leave the session as it is, but last written long ago: exported and imported back so. */
  class MakeIdle implements Cmd {
    constructor(readonly id: string) {}
    check = () => true;
    async run(m: Model, r: Real) {
      const s = m.sessions.get(this.id);
      if (!s) return;
      const exported = await r.store.exportSession(full(r, this.id));
      const checkpoints = [];
      for await (const cp of exported!.checkpoints) checkpoints.push(cp);
      const outcome = await r.store.importSession(
        { ...exported!, checkpoints, updatedAt: new Date(2_000) },
        { ifExists: 'replace' },
      );
      expect(outcome).toBe('imported');
      // An import carries no idempotency keys, and continues from the highest seq it holds.
      s.keys = new Map();
      s.last = Math.max(...s.checkpoints.keys());
      s.idle = true;
    }
    toString() {
      return `makeIdle(${this.id})`;
    }
  }

  /** Sweep the store: delete the idle sessions without pins, prune the others by keepLast. */
  class Sweep implements Cmd {
    constructor(readonly keepLast: number | undefined) {}
    check = () => listSessions;
    async run(m: Model, r: Real) {
      const result = await r.store.sweep({
        idleFor: DAY,
        ...(this.keepLast === undefined ? {} : { keepLast: this.keepLast }),
      });
      const want = { sessions: 0, checkpoints: 0 };
      for (const [id, s] of [...m.sessions]) {
        const pinned = [...s.checkpoints.values()].some((cp) => cp.pin !== undefined);
        if (s.idle && !pinned) {
          m.sessions.delete(id);
          want.sessions++;
          want.checkpoints += s.checkpoints.size;
        } else if (this.keepLast !== undefined) {
          want.checkpoints += Model.prune(s, this.keepLast);
        }
      }
      expect(result).toEqual(want);
    }
    toString() {
      return `sweep(idleFor a day, keepLast ${this.keepLast})`;
    }
  }

  class Delete implements Cmd {
    constructor(readonly id: string) {}
    check = () => true;
    async run(m: Model, r: Real) {
      expect(await r.store.delete(full(r, this.id))).toBe(m.sessions.delete(this.id));
    }
    toString() {
      return `delete(${this.id})`;
    }
  }

  class CheckReads implements Cmd {
    constructor(
      readonly id: string,
      readonly pageSize: number,
    ) {}
    check = () => true;
    async run(m: Model, r: Real) {
      const s = m.sessions.get(this.id);
      const info = await r.store.info(full(r, this.id));
      if (!s) {
        expect(info).toBeNull();
        expect(await r.store.load(full(r, this.id))).toBeNull();
        expect(await r.store.history(full(r, this.id))).toEqual([]);
        return;
      }
      const forkedFrom = s.forkedFrom && {
        ...s.forkedFrom,
        sessionId: full(r, s.forkedFrom.sessionId),
      };
      expect(info).toMatchObject({ head: s.head, checkpoints: s.checkpoints.size, forkedFrom });
      const head = await r.store.load(full(r, this.id));
      expect(head?.seq).toBe(s.head);
      expect(head?.parent).toBe(s.checkpoints.get(s.head)!.parent);
      expect(head?.data).toEqual(s.checkpoints.get(s.head)!.data);
      // Backends may keep the head's details apart from its checkpoint: they must agree.
      expect(head).toEqual(await r.store.load(full(r, this.id), s.head));
      const history = m.history(this.id);
      expect(await r.store.history(full(r, this.id))).toEqual(history);
      const listed = await allPages((p) => r.store.list(full(r, this.id), p), this.pageSize);
      expect(listed.map((c) => [c.seq, c.parent, c.pinned, c.pinNote])).toEqual(
        [...s.checkpoints.values()]
          .sort((a, b) => b.seq - a.seq)
          .map((c) => [c.seq, c.parent, c.pin !== undefined, c.pin ?? null]),
      );
      const transcript = await allPages(
        (p) => r.store.transcript(full(r, this.id), p),
        this.pageSize,
      );
      const want = history
        .slice()
        .reverse()
        .flatMap((seq) =>
          s.checkpoints
            .get(seq)!
            .transcript.map((item, index) => ({ seq, index, item }))
            .reverse(),
        );
      expect(transcript.map(({ seq, index, item }) => ({ seq, index, item }))).toEqual(want);
      const exported = await r.store.exportSession(full(r, this.id));
      const needs: [number, number[]][] = [];
      for await (const cp of exported!.checkpoints) needs.push([cp.seq, cp.needs ?? []]);
      expect(needs).toEqual(
        [...s.checkpoints.values()].sort((a, b) => a.seq - b.seq).map((c) => [c.seq, c.needs]),
      );
    }
    toString() {
      return `check(${this.id}, pages of ${this.pageSize})`;
    }
  }

  /** The sessions of this run whose model id starts with `start`, listed by prefix. */
  class CheckSessions implements Cmd {
    constructor(readonly start: string) {}
    check = () => listSessions;
    async run(m: Model, r: Real) {
      const prefix = full(r, this.start);
      const mine = await allPages((p) => r.store.sessions({ ...p, prefix }), 3);
      const base = full(r, '').length;
      expect(mine.map((s) => s.sessionId.slice(base)).sort(compareCodePoints)).toEqual(
        [...m.sessions.keys()].filter((id) => id.startsWith(this.start)).sort(compareCodePoints),
      );
      for (const s of mine) expect(s.head).toBe(m.sessions.get(s.sessionId.slice(base))!.head);
    }
    toString() {
      return `checkSessions(prefix ${JSON.stringify(this.start)})`;
    }
  }

  return [
    fc
      .tuple(
        id,
        json,
        fc.array(json, { maxLength: 3 }),
        fc.constantFrom('any', 'any', 'head', 'stale', 'absent'),
        fc.option(fc.constantFrom(...KEYS), { nil: undefined, freq: 3 }),
        fc.oneof(
          fc.constant<number[]>([]),
          fc.array(fc.integer({ min: 1, max: 12 }), { maxLength: 3 }),
        ),
      )
      .map(([i, d, t, e, k, n]) => new Checkpoint(i, d, t, e as Checkpoint['expect'], k, n)),
    fc.tuple(id, fc.nat(10)).map(([i, p]) => new Rollback(i, p)),
    fc
      .tuple(id, id, fc.option(fc.nat(10), { nil: undefined }))
      .map(([i, n, p]) => new Fork(i, n, p)),
    fc.tuple(id, fc.integer({ min: 1, max: 4 })).map(([i, k]) => new Prune(i, k)),
    fc
      .tuple(id, fc.nat(10), fc.option(fc.constantFrom('keep', 'why'), { nil: undefined }))
      .map(([i, p, n]) => new Pin(i, p, n, false)),
    fc.tuple(id, fc.nat(10)).map(([i, p]) => new Pin(i, p, undefined, true)),
    id.map((i) => new MakeIdle(i)),
    fc.option(fc.integer({ min: 1, max: 3 }), { nil: undefined }).map((k) => new Sweep(k)),
    id.map((i) => new Delete(i)),
    fc.tuple(id, fc.constantFrom(1, 2, 50)).map(([i, p]) => new CheckReads(i, p)),
    fc.constantFrom('', 'a', 'A', '{', '%', '\u{1F99C}').map((p) => new CheckSessions(p)),
  ];
}

/** The model-based run. */
export function modelCases(t: ContractContext, caps: BackendCapabilities, runs: number): void {
  describe('model-based', () => {
    it(`agrees with the reference model over ${runs} random operation sequences`, async () => {
      let runIndex = 0;
      await fc.assert(
        fc.asyncProperty(
          fc.commands(commandArbitraries(caps.listSessions), { maxCommands: 25 }),
          async (commands) => {
            const real: Real = { store: t.store, run: `run${runIndex++}` };
            await fc.asyncModelRun(() => ({ model: new Model(), real }), commands);
            // A sweep walks the whole store: the next run's model must be all there is.
            for (const id of IDS) await real.store.delete(full(real, id));
          },
        ),
        { numRuns: runs },
      );
    });
  });
}
