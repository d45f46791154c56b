/**
 * The composition suite: for each backend and each integration, fast-check draws sequences
 * that interleave the integration's writes with the generic operations on a few sessions, and
 * every step is checked by the rules (rules.ts). A failure prints fast-check's seed and the
 * shrunk sequence.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointBackend, CheckpointStore } from '@ckpt/core';
import { memory } from '@ckpt/memory';
import { emptyStore, type StoreUnderTest } from '@ckpt/test-stores';
import fc from 'fast-check';
import { afterAll, describe, it } from 'vitest';
import type { Driver } from './driver.js';
import { OPERATIONS, type Surroundings, type TargetKind } from './operations.js';
import { SEED } from './plan.js';
import { World } from './world.js';

export interface SuiteOptions {
  /** A name for the namespaces this file uses on the servers (another file runs beside it). */
  part: string;
  drivers: Driver[];
  backends: StoreUnderTest[];
  /** Sequences per backend and integration. */
  runs: number;
  /** Steps per sequence, at most. */
  steps: number;
}

/** The sessions every sequence starts with. */
const SESSIONS = ['a', 'b'];

/** One step: a write on a session, or an operation with its parameters. */
function stepsOf(driver: Driver, backend: StoreUnderTest, steps: number) {
  const operations = OPERATIONS.filter((op) => !(op.lists && backend.singleWriter));
  const step = fc.oneof(
    { weight: 3, arbitrary: fc.record({ write: driver.write, on: fc.nat(7) }) },
    {
      weight: 2,
      arbitrary: fc.oneof(
        ...operations.map((op) => op.params(driver).map((params) => ({ op: op.name, params }))),
      ),
    },
  );
  return fc.record({
    // The store starts plain, or already encrypted (so that a reencode moves from key to key).
    generation: fc.constantFrom(0, 1),
    opening: fc.array(driver.write, { minLength: SESSIONS.length, maxLength: SESSIONS.length * 2 }),
    steps: fc.array(step, { minLength: 1, maxLength: steps }),
  });
}

type Sequence = ReturnType<typeof stepsOf> extends fc.Arbitrary<infer T> ? T : never;

export function compositionSuite(options: SuiteOptions): void {
  const dir = mkdtempSync(join(tmpdir(), `ckpt-composition-${options.part}-`));
  const counted: string[] = [];
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  describe.each(options.backends)('on $name', (backend) => {
    // The stores a run opens, closed when it ends: a server's connections are not held across
    // runs (MariaDB refuses a connection beyond its max_connections).
    const opened: { close(): Promise<void> }[] = [];
    const closeOpened = async () => {
      for (const handle of opened.splice(0)) await handle.close();
    };
    afterAll(closeOpened);
    let made = 0;
    /** A store of this backend in `namespace`: fresh for an in-process store or a file, emptied on a server. */
    const open = async (namespace: string, scopes: string[]): Promise<CheckpointStore> => {
      const name = backend.server ? namespace : `${namespace}_${++made}`;
      const handle = await backend.open(name, dir);
      opened.push(handle);
      if (backend.server) await emptyStore(handle.store, scopes);
      return handle.store;
    };

    describe.each(options.drivers)('$name', (driver) => {
      const namespace = `cmp_${options.part}_${driver.name.replace(/\W+/g, '_')}`;
      it(`${options.runs} sequences`, async () => {
        const around: Surroundings = {
          dir,
          target: async (kind: TargetKind): Promise<CheckpointBackend> =>
            kind === 'memory' ? memory() : (await open(`${namespace}_t`, driver.scopes)).backend,
        };
        await fc.assert(
          fc.asyncProperty(stepsOf(driver, backend, options.steps), async (sequence: Sequence) => {
            const store = await open(namespace, driver.scopes);
            try {
              await play(
                new World(driver, store.backend, SESSIONS, sequence.generation),
                sequence,
                around,
              );
            } finally {
              await closeOpened();
            }
          }),
          { numRuns: options.runs, ...(SEED === undefined ? {} : { seed: SEED }) },
        );
        counted.push(`${driver.name} on ${backend.name}`);
      }, 600_000);
    });
  });

  it('counts the sequences it ran', () => {
    const total = counted.length * options.runs;
    console.log(
      `composition (${options.part}): ${total} sequences on ${options.backends.length} backends x ${options.drivers.length} integrations`,
    );
  });
}

async function play(world: World, sequence: Sequence, around: Surroundings): Promise<void> {
  for (const [i, write] of sequence.opening.entries()) {
    await world.write(SESSIONS[i % SESSIONS.length]!, write);
  }
  for (const step of sequence.steps) {
    if ('write' in step) {
      await world.write(world.pick(step.on), step.write);
      continue;
    }
    const operation = OPERATIONS.find((op) => op.name === step.op)!;
    await world.apply(`${step.op} ${JSON.stringify(step.params)}`, () =>
      operation.run(world, step.params, around),
    );
  }
}
