/**
 * One run of the suite: an integration's sessions on a backend under test, the codecs the
 * store writes with, and a twin (a plain memory store) that receives the same writes and no
 * operation that removes, so that what a write reads after an operation can be told right.
 * Writes and operations go through `write` and `apply`, which check the rules (rules.ts).
 */
import { createHash } from 'node:crypto';
import {
  type CheckpointBackend,
  CheckpointStore,
  compress,
  encrypt,
  isCkptError,
  kvBackend,
  type StoreOptions,
} from '@ckpt/core';
import { memory, memoryKv } from '@ckpt/memory';
import { expect } from 'vitest';
import type { Bound, Driver, Reads } from './driver.js';
import { asTwin, forked, removed, rolledBack, unchanged } from './rules.js';

/** The key of generation `g` (1 and up; 0 is no encryption), fixed so that a run can be replayed. */
const keyOf = (g: number) => createHash('sha256').update(`ckpt composition key ${g}`).digest();

/** What an operation did, for the rules to check. */
export type Effect =
  /** Nothing the framework reads changed (pin, unpin). */
  | { same: true }
  /** Checkpoints of `names` may be gone: at least the `keepLast` newest, the head and the pins stay. */
  | { removes: { keepLast: number; names: string[] } }
  /** `name` was forked from `source` at checkpoint `atSeq`. */
  | { fork: { source: string; name: string; atSeq: number } }
  /** The head of `name` moved to checkpoint `seq`. */
  | { rollback: { name: string; seq: number } }
  | { deleted: string }
  /** `store` holds a copy of every session (copyStore, an export imported). */
  | { copy: CheckpointStore }
  /** Every value was rewritten under a new key; `during` has both keys, the world now the new one. */
  | { rekeyed: CheckpointStore }
  /** Writes, each checked as it was made. */
  | { wrote: true };

export class World {
  readonly driver: Driver;
  readonly backend: CheckpointBackend;
  /** The twin: every write, no removal; as able to list sessions as the backend is. */
  readonly twin: CheckpointStore;
  /** The sessions written, by the names the suite gives them (forks added, deleted ones gone). */
  readonly names: string[];
  /** What the application read of each session, by the seq of the head it read at. */
  readonly readAt = new Map<string, Map<number, unknown>>();
  readonly pins = new Map<string, Set<number>>();
  /** Sessions that an operation removed checkpoints from. */
  readonly removedFrom = new Set<string>();
  /** The key generations the store is given, the current one first (0: no codecs). */
  generations: number[];
  real: CheckpointStore;
  /** Writes made, which number the ids they make; forks made, which number their names. */
  step = 0;
  forks = 0;

  constructor(driver: Driver, backend: CheckpointBackend, names: string[], generation: number) {
    this.driver = driver;
    this.backend = backend;
    this.names = [...names];
    this.generations = [generation];
    this.real = this.storeWith(this.generations);
    const kv = memoryKv();
    this.twin = new CheckpointStore(
      this.real.capabilities.listSessions
        ? memory()
        : kvBackend({ get: kv.get, set: kv.set, delete: kv.delete }),
    );
  }

  /** The codecs of key generations `gens`, the first sealing new values. */
  static codecs(gens: number[]): StoreOptions['codecs'] {
    const sealed = gens.filter((g) => g > 0);
    if (sealed.length === 0) return [];
    const keys = Object.fromEntries(sealed.map((g) => [`k${g}`, keyOf(g)]));
    return [compress('gzip', { minBytes: 64 }), encrypt({ keys, current: `k${sealed[0]}` })];
  }

  /** The environment that gives `ckpt` the keys of `gens`. */
  static cliEnv(gens: number[]): Record<string, string> {
    const sealed = gens.filter((g) => g > 0);
    if (sealed.length === 0) return {};
    return {
      CKPT_KEYS: sealed.map((g) => `k${g}=${keyOf(g).toString('base64')}`).join(','),
      CKPT_COMPRESS: 'gzip',
    };
  }

  /** A store on the backend under test with the codecs of `gens` (and `options`). */
  storeWith(gens: number[], options: StoreOptions = {}): CheckpointStore {
    return new CheckpointStore(this.backend, { ...options, codecs: World.codecs(gens) });
  }

  sessionOf(name: string): string {
    return this.driver.sessionId(name);
  }

  /** The session `index` picks among those written, wrapping. */
  pick(index: number): string {
    return this.names[index % this.names.length]!;
  }

  /** The session `index` picks among those stored (wrapping), or undefined when none is. */
  async pickStored(index: number): Promise<string | undefined> {
    const stored: string[] = [];
    for (const name of this.names) {
      if ((await this.real.head(this.sessionOf(name))) !== null) stored.push(name);
    }
    return stored.length === 0 ? undefined : stored[index % stored.length];
  }

  bound(name: string, store = this.real): Bound {
    return { store, sessionId: this.sessionOf(name) };
  }

  /** What the framework reads of every session, on `store`. */
  async readAll(store = this.real): Promise<Map<string, Reads>> {
    const all = new Map<string, Reads>();
    for (const name of this.names) all.set(name, await this.driver.read(this.bound(name, store)));
    return all;
  }

  /** The seqs of `name` that are stored, newest first. */
  async storedSeqs(name: string): Promise<number[]> {
    const seqs: number[] = [];
    let cursor: string | null = null;
    do {
      const page = await this.real.list(this.sessionOf(name), { limit: 1000, cursor });
      seqs.push(...page.items.map((cp) => cp.seq));
      cursor = page.cursor;
    } while (cursor !== null);
    return seqs;
  }

  /** The stored seqs of `name` at which the application read it (for a rollback or a fork). */
  async readableSeqs(name: string): Promise<number[]> {
    const stored = new Set(await this.storedSeqs(name));
    return [...(this.readAt.get(name)?.keys() ?? [])].filter((seq) => stored.has(seq));
  }

  /** Record what was read of `name` at its head. */
  async remember(name: string, reads: Reads): Promise<void> {
    const head = await this.real.head(this.sessionOf(name));
    if (head === null) return;
    const at = this.readAt.get(name) ?? new Map<number, unknown>();
    this.readAt.set(name, at);
    at.set(head, reads.current);
  }

  /**
   * Make one framework write on session `name` of the store under test (or `through`, a store
   * with other options on the same backend) and on the twin: both end the same way (done, or
   * refused with the same code), and read the same.
   */
  async write(name: string, write: unknown, through = this.real): Promise<void> {
    const step = ++this.step;
    const real = this.bound(name, through);
    const twin = this.bound(name, this.twin);
    const action = await this.driver.prepare(write, { real, twin }, step);
    const what = `write ${step} on ${name} (${JSON.stringify(action)})`;
    const outcome = [await outcomeOf(this.driver.perform(action, real))];
    outcome.push(await outcomeOf(this.driver.perform(action, twin)));
    expect(outcome[0], `${what}: ends as on the twin`).toBe(outcome[1]);
    const reads = await this.driver.read(this.bound(name));
    asTwin(reads, await this.driver.read(twin), what, this.removedFrom.has(name));
    await this.remember(name, reads);
  }

  /** Run one operation and check what the framework reads after it by the rules. */
  async apply(what: string, operation: () => Promise<Effect>): Promise<void> {
    const before = await this.readAll();
    const heads = new Map<string, number | null>();
    for (const name of this.names) heads.set(name, await this.real.head(this.sessionOf(name)));
    const effect = await operation();
    if ('wrote' in effect) return;
    if ('rekeyed' in effect) {
      await expectAll(before, await this.readAll(effect.rekeyed), `${what}, with both keys`);
      await expectAll(before, await this.readAll(), `${what}, with the new key only`);
      return;
    }
    if ('copy' in effect) {
      await expectAll(before, await this.readAll(effect.copy), `${what}, read in the target`);
      await expectAll(before, await this.readAll(), `${what}, read in the source`);
      return;
    }
    const after = await this.readAll();
    for (const [name, was] of before) {
      const now = after.get(name)!;
      const about = `${what}: ${name}`;
      if ('removes' in effect && effect.removes.names.includes(name)) {
        const head = heads.get(name);
        const kept = [...(this.pins.get(name) ?? [])];
        if (typeof head === 'number') kept.push(head);
        removed(was, now, about, { keepLast: effect.removes.keepLast, kept });
        for (const seq of this.pins.get(name) ?? []) {
          expect(
            await this.real.load(this.sessionOf(name), seq),
            `${about}: pinned ${seq}`,
          ).not.toBeNull();
        }
      } else if ('rollback' in effect && effect.rollback.name === name) {
        const atSeq = this.readAt.get(name)!.get(effect.rollback.seq);
        rolledBack(atSeq, was, now, about);
      } else if ('deleted' in effect && effect.deleted === name) {
        const nothing = await this.driver.read(this.bound(name, new CheckpointStore(memory())));
        unchanged(nothing, now, `${about}: reads as never written`);
      } else {
        unchanged(was, now, about);
      }
    }
    if ('removes' in effect) for (const name of effect.removes.names) this.removedFrom.add(name);
    if ('fork' in effect) {
      const { source, name, atSeq } = effect.fork;
      const reads = await this.driver.read(this.bound(name));
      forked(
        this.readAt.get(source)!.get(atSeq),
        before.get(source)!,
        reads,
        `${what}: ${name}`,
        this.driver.asForked?.bind(this.driver),
      );
      // The twin forks too, so that later writes on the fork are checked as any other.
      await this.twin.fork(this.sessionOf(source), { atSeq, newId: this.sessionOf(name) });
      this.names.push(name);
      if (this.removedFrom.has(source)) this.removedFrom.add(name);
      await this.remember(name, reads);
    }
    if ('rollback' in effect) {
      const { name, seq } = effect.rollback;
      await this.twin.rollback(this.sessionOf(name), seq);
      await this.remember(name, after.get(name)!);
    }
    if ('deleted' in effect) {
      await this.twin.delete(this.sessionOf(effect.deleted));
      this.names.splice(this.names.indexOf(effect.deleted), 1);
      this.pins.delete(effect.deleted);
      this.readAt.delete(effect.deleted);
    }
  }
}

async function expectAll(before: Map<string, Reads>, after: Map<string, Reads>, what: string) {
  for (const [name, was] of before) unchanged(was, after.get(name)!, `${what}: ${name}`);
}

/** 'done', or the code (or name) of what the call was refused with. */
async function outcomeOf(call: Promise<void>): Promise<string> {
  try {
    await call;
    return 'done';
  } catch (err) {
    if (isCkptError(err)) return err.code;
    return err instanceof Error ? `${err.name}: ${err.message}` : String(err);
  }
}
