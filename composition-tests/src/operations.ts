/**
 * The generic operations: every way ckpt changes a store without the framework, from core's
 * API, the `ckpt` command and the studio's API. Each draws its parameters, runs, and says what
 * it did (an `Effect`), which the rules (rules.ts) turn into what the framework must read.
 */
import { join } from 'node:path';
import {
  type CheckpointBackend,
  CheckpointStore,
  copyStore,
  exportStore,
  importStore,
} from '@ckpt/core';
import fc from 'fast-check';
import type { Driver } from './driver.js';
import { ckpt, studioChange } from './tools.js';
import { type Effect, World } from './world.js';

const DAY = 86_400_000;

/** Where a copy or an import goes: a memory store, or a fresh namespace of the same backend. */
export type TargetKind = 'memory' | 'same backend';

/** What an operation runs with besides the world. */
export interface Surroundings {
  /** An empty store of that kind to copy or import into. */
  target(kind: TargetKind): Promise<CheckpointBackend>;
  /** A folder for files (exports). */
  dir: string;
}

// biome-ignore lint/suspicious/noExplicitAny: one list holds operations of different parameters, each drawing and taking its own
export interface Operation<P = any> {
  name: string;
  /** Whether it lists the store's sessions, which a KV without `list` cannot. */
  lists?: boolean;
  params(driver: Driver): fc.Arbitrary<P>;
  run(world: World, params: P, around: Surroundings): Promise<Effect>;
}

/** A session, by its index among those written (wrapping). */
const session = fc.nat(7);
/** By count (`keepLast`), or by age (every checkpoint older than 1 ms: in effect all). */
const rule = fc.oneof(
  fc.record({ keepLast: fc.integer({ min: 1, max: 5 }) }),
  fc.constant({ olderThan: 1 }),
);
type Rule = { keepLast: number } | { olderThan: number };
const keepOf = (r: Rule) => ('keepLast' in r ? r.keepLast : 0);
const cliRule = (r: Rule) =>
  'keepLast' in r ? ['--keep-last', String(r.keepLast)] : ['--older-than', '1ms'];
const target = fc.constantFrom<TargetKind>('memory', 'same backend');

/** The URLs the command is given, and the backend each names. */
const REAL = 'ckpt:real';
const TARGET = 'ckpt:target';
const run = (world: World, args: string[], gens = world.generations, target?: CheckpointBackend) =>
  ckpt(
    args,
    { [REAL]: world.backend, ...(target ? { [TARGET]: target } : {}) },
    {
      CKPT_STORE: REAL,
      ...World.cliEnv(gens),
    },
  );

/** The `at`-th of `seqs` (wrapping), or undefined when there are none. */
const nth = (seqs: number[], at: number) =>
  seqs.length === 0 ? undefined : seqs[at % seqs.length];

/** A store on `backend` that reads the world's codecs. */
const reading = (world: World, backend: CheckpointBackend) =>
  new CheckpointStore(backend, { codecs: World.codecs(world.generations) });

/** Prune one session: through core, the command or the studio. */
function prune(via: 'core' | 'ckpt' | 'studio'): Operation<{ at: number; rule: Rule }> {
  return {
    name: `prune (${via})`,
    params: () =>
      fc.record({
        at: session,
        rule: via === 'studio' ? rule.filter((r) => 'keepLast' in r) : rule,
      }),
    async run(world, { at, rule }) {
      const name = await world.pickStored(at);
      if (name === undefined) return { same: true };
      const id = world.sessionOf(name);
      if (via === 'core') await world.real.prune(id, rule);
      else if (via === 'ckpt')
        await run(world, ['prune', ...world.driver.cliWords(id), ...cliRule(rule)]);
      else await studioChange(world.real, `/api/sessions/${encodeURIComponent(id)}/prune`, rule);
      return { removes: { keepLast: keepOf(rule), names: [name] } };
    },
  };
}

/** Sweep the store: nothing is idle for 30 days; every session is pruned. */
function sweep(via: 'core' | 'ckpt'): Operation<{ keepLast: number; idle: boolean }> {
  return {
    name: `sweep (${via})`,
    lists: true,
    params: () => fc.record({ keepLast: fc.integer({ min: 1, max: 5 }), idle: fc.boolean() }),
    async run(world, { keepLast, idle }) {
      if (via === 'core')
        await world.real.sweep({ keepLast, ...(idle ? { idleFor: 30 * DAY } : {}) });
      else
        await run(world, [
          'sweep',
          '--keep-last',
          String(keepLast),
          ...(idle ? ['--idle', '30d'] : []),
        ]);
      return { removes: { keepLast, names: [...world.names] } };
    },
  };
}

/** A run of writes on one session through a store with `retention: { keepLast }`. */
const retention: Operation<{ at: number; keepLast: number; writes: unknown[] }> = {
  name: 'retention',
  params: (driver) =>
    fc.record({
      at: session,
      keepLast: fc.integer({ min: 1, max: 4 }),
      // Enough writes for the session to reach a tenth checkpoint, where retention prunes.
      writes: fc.array(driver.write, { minLength: 4, maxLength: 10 }),
    }),
  async run(world, { at, keepLast, writes }) {
    const name = world.pick(at);
    const retained = world.storeWith(world.generations, { retention: { keepLast } });
    world.removedFrom.add(name);
    for (const write of writes) await world.write(name, write, retained);
    return { wrote: true };
  },
};

/** Fork a session at a checkpoint the application read it at. */
function fork(via: 'core' | 'ckpt' | 'studio'): Operation<{ at: number; seq: number }> {
  return {
    name: `fork (${via})`,
    params: () => fc.record({ at: session, seq: fc.nat(20) }),
    async run(world, { at, seq }) {
      const source = world.pick(at);
      const atSeq = nth(await world.readableSeqs(source), seq);
      if (atSeq === undefined) return { same: true };
      const name = `${source}-fork${++world.forks}`;
      const id = world.sessionOf(source);
      const newId = world.sessionOf(name);
      if (via === 'core') await world.real.fork(id, { atSeq, newId });
      else if (via === 'ckpt') {
        await run(world, [
          'fork',
          ...world.driver.cliWords(id),
          '--at',
          String(atSeq),
          '--new-id',
          newId,
        ]);
      } else
        await studioChange(world.real, `/api/sessions/${encodeURIComponent(id)}/fork`, {
          atSeq,
          newId,
        });
      return { fork: { source, name, atSeq } };
    },
  };
}

/** Move the head: through the command or the studio (core's rollback is a write of its own). */
function rollback(via: 'ckpt' | 'studio'): Operation<{ at: number; seq: number }> {
  return {
    name: `rollback (${via})`,
    params: () => fc.record({ at: session, seq: fc.nat(20) }),
    async run(world, { at, seq }) {
      const name = world.pick(at);
      const to = nth(await world.readableSeqs(name), seq);
      if (to === undefined) return { same: true };
      const id = world.sessionOf(name);
      if (via === 'ckpt') await run(world, ['rollback', ...world.driver.cliWords(id), String(to)]);
      else
        await studioChange(world.real, `/api/sessions/${encodeURIComponent(id)}/rollback`, {
          seq: to,
        });
      return { rollback: { name, seq: to } };
    },
  };
}

function pin(via: 'core' | 'ckpt'): Operation<{ at: number; seq: number }> {
  return {
    name: `pin (${via})`,
    params: () => fc.record({ at: session, seq: fc.nat(40) }),
    async run(world, { at, seq }) {
      const name = world.pick(at);
      const chosen = nth(await world.storedSeqs(name), seq);
      if (chosen === undefined) return { same: true };
      const id = world.sessionOf(name);
      if (via === 'core') await world.real.pin(id, chosen, { note: 'kept by the suite' });
      else await run(world, ['pin', ...world.driver.cliWords(id), String(chosen)]);
      const pins = world.pins.get(name) ?? new Set<number>();
      world.pins.set(name, pins);
      pins.add(chosen);
      return { same: true };
    },
  };
}

function unpin(via: 'core' | 'ckpt'): Operation<{ at: number; seq: number }> {
  return {
    name: `unpin (${via})`,
    params: () => fc.record({ at: session, seq: fc.nat(10) }),
    async run(world, { at, seq }) {
      const name = world.pick(at);
      const chosen = nth([...(world.pins.get(name) ?? [])], seq);
      if (chosen === undefined) return { same: true };
      const id = world.sessionOf(name);
      if (via === 'core') await world.real.unpin(id, chosen);
      else await run(world, ['unpin', ...world.driver.cliWords(id), String(chosen)]);
      world.pins.get(name)!.delete(chosen);
      return { same: true };
    },
  };
}

/** Copy the whole store: core's `copyStore`, or `ckpt copy`. */
function copy(via: 'core' | 'ckpt'): Operation<{ to: TargetKind }> {
  return {
    name: `copy (${via})`,
    lists: true,
    params: () => fc.record({ to: target }),
    async run(world, { to }, around) {
      const into = await around.target(to);
      if (via === 'core') await copyStore(world.real, reading(world, into));
      else await run(world, ['copy', '--from', REAL, '--to', TARGET], world.generations, into);
      return { copy: reading(world, into) };
    },
  };
}

/** Export the whole store and import it into an empty one: core's, or `ckpt export`/`import`. */
function exportImport(via: 'core' | 'ckpt'): Operation<{ to: TargetKind }> {
  return {
    name: `export, import (${via})`,
    lists: true,
    params: () => fc.record({ to: target }),
    async run(world, { to }, around) {
      const into = await around.target(to);
      if (via === 'core') {
        const lines: string[] = [];
        for await (const line of exportStore(world.real)) lines.push(line);
        await importStore(reading(world, into), lines);
      } else {
        const file = join(around.dir, `export-${world.step}-${Date.now()}.jsonl`);
        await run(world, ['export', '--out', file]);
        await run(world, ['--store', TARGET, 'import', file], world.generations, into);
      }
      return { copy: reading(world, into) };
    },
  };
}

/** Rewrite every value under a new key: core's `reencode`, or `ckpt rekey`. */
function reencode(via: 'core' | 'ckpt'): Operation<Record<string, never>> {
  return {
    name: `reencode (${via})`,
    lists: true,
    params: () => fc.constant({}),
    async run(world) {
      const next = Math.max(...world.generations) + 1;
      const both = [next, world.generations[0]!];
      const during = world.storeWith(both);
      if (via === 'core') await during.reencode();
      else await run(world, ['rekey'], both);
      world.generations = [next];
      world.real = world.storeWith(world.generations);
      return { rekeyed: during };
    },
  };
}

/** Delete a session (by design: it then reads as never written). */
const remove: Operation<{ at: number }> = {
  name: 'delete (ckpt)',
  params: () => fc.record({ at: session }),
  async run(world, { at }) {
    // Keep one session to write to.
    const name = await world.pickStored(at);
    if (name === undefined || world.names.length < 2) return { same: true };
    await run(world, ['delete', ...world.driver.cliWords(world.sessionOf(name)), '--yes']);
    return { deleted: name };
  },
};

export const OPERATIONS: Operation[] = [
  prune('core'),
  prune('ckpt'),
  prune('studio'),
  sweep('core'),
  sweep('ckpt'),
  retention,
  fork('core'),
  fork('ckpt'),
  fork('studio'),
  rollback('ckpt'),
  rollback('studio'),
  pin('core'),
  pin('ckpt'),
  unpin('core'),
  unpin('ckpt'),
  copy('core'),
  copy('ckpt'),
  exportImport('core'),
  exportImport('ckpt'),
  reencode('core'),
  reencode('ckpt'),
  remove,
];
