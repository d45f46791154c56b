/** The three measurements every backend gets, written once: vs raw, scaling, vs peer. */
import { CheckpointStore } from '@ckpt/core';
import { interleaved, type Plan, type Stats } from './measure.js';
import { agentState } from './payloads.js';
import type { Row } from './report.js';

const KIB = 1024;
/** The `keepLast` of the retention variant of the write measurement. */
const RETAIN = 20;

/** The raw driver on the same connection: one INSERT and one SELECT by primary key. */
export interface RawDriver {
  /** Store `encoded` in its own transaction; returns its key. */
  insert(encoded: string): Promise<unknown> | unknown;
  /** Read the bytes stored under `key`. */
  select(key: unknown): Promise<string> | string;
  /**
   * Bring what the writes left behind to one state before the reads are measured, so that both
   * sides read from the same place (SQLite: write the WAL back into the database file).
   */
  settle?(): unknown;
  /**
   * Remove what insert() stored so far. Given for a server that holds everything in memory:
   * after each round of writes this runs, and ckpt's sessions are pruned to their head, both
   * outside the timing, so that a long run cannot fill the server's memory.
   */
  discard?(): Promise<unknown>;
  /** What the two are called in the table (default: raw INSERT, raw SELECT). */
  names?: { insert: string; select: string };
  /**
   * Other ways of doing the raw write or read, measured beside it for reference; their rows are
   * called after the raw ones, with `, <name>` added.
   */
  references?: RawReference[];
}

/** Another way of doing the raw write, the raw read, or both. */
export interface RawReference {
  name: string;
  insert?(encoded: string): Promise<unknown> | unknown;
  select?(key: unknown): Promise<unknown> | unknown;
}

function row(
  group: Row['group'],
  backend: string,
  operation: string,
  variant: string,
  stats: Stats,
  base: Stats | null,
  ratioTo: string | null,
  target: string | null,
  by: 'median' | 'throughput' = 'median',
): Row {
  // Medians: a per-operation time that one slow fsync or GC pause does not swing. With many
  // callers at once, latency is mostly queueing, so the time per operation is 1 / throughput.
  const ratio = !base
    ? null
    : by === 'median'
      ? stats.p50Us / base.p50Us
      : base.opsPerSec / stats.opsPerSec;
  return { group, operation, backend, variant, stats, ratio, ratioTo, target };
}

/**
 * checkpoint and load of 1 KiB and 64 KiB against the raw INSERT and SELECT of the same bytes;
 * with `callers` > 1, that many callers at once, each on a session of its own.
 */
export async function versusRaw(
  backend: string,
  store: CheckpointStore,
  raw: RawDriver,
  plan: Plan,
  targets: { checkpoint: string; load: string },
  callers = 1,
): Promise<Row[]> {
  const rows: Row[] = [];
  const by = callers > 1 ? 'throughput' : 'median';
  const names = raw.names ?? { insert: 'raw INSERT', select: 'raw SELECT' };
  const references = raw.references ?? [];
  const at = { ...plan, callers };
  for (const size of [1 * KIB, 64 * KIB]) {
    const data = agentState(size);
    const encoded = JSON.stringify(data);
    const label = `${size / KIB} KiB${callers > 1 ? `, ${callers} callers` : ''}`;
    const session = (caller: number) => `vs-raw-${size}-${caller}-${Date.now()}`;
    const sessions = Array.from({ length: callers }, (_, caller) => session(caller));
    // The same writes through a store whose `retention` option prunes each session as it grows:
    // its cost on the write path, which falls on one checkpoint in RETENTION_INTERVAL.
    const retained = new CheckpointStore(store.backend, { retention: { keepLast: RETAIN } });
    const retainedSessions = sessions.map((id) => `${id}-retained`);
    const { discard } = raw;
    const bounded = discard
      ? async () => {
          for (const id of [...sessions, ...retainedSessions]) {
            await store.prune(id, { keepLast: 1 });
          }
          await discard();
        }
      : undefined;
    // Beside each raw call, the same with the JSON work the raw call is spared (it is handed
    // the encoded bytes, and hands bytes back): the floor of what a store of values can reach.
    const write = await interleaved(
      [
        { name: 'ckpt', op: (caller) => store.checkpoint(sessions[caller]!, data) },
        {
          name: `ckpt, retention keepLast ${RETAIN}`,
          op: (caller) => retained.checkpoint(retainedSessions[caller]!, data),
        },
        { name: names.insert, op: () => raw.insert(encoded) },
        {
          name: `${names.insert} + JSON.stringify`,
          op: () => raw.insert(JSON.stringify(data)),
        },
        ...references.flatMap(({ name, insert }) =>
          insert ? [{ name: `${names.insert}, ${name}`, op: () => insert(encoded) }] : [],
        ),
      ],
      at,
      bounded,
    );
    const key = await raw.insert(encoded);
    await raw.settle?.();
    const read = await interleaved(
      [
        { name: 'ckpt', op: (caller) => store.load(sessions[caller]!) },
        { name: names.select, op: () => raw.select(key) },
        {
          name: `${names.select} + JSON.parse`,
          op: async () => JSON.parse(await raw.select(key)),
        },
        ...references.flatMap(({ name, select }) =>
          select ? [{ name: `${names.select}, ${name}`, op: () => select(key) }] : [],
        ),
      ],
      at,
    );
    const compared = (
      operation: string,
      measured: Map<string, Stats>,
      rawName: string,
      target: string,
    ) => {
      const base = measured.get(rawName)!;
      return [...measured].map(([variant, stats]) =>
        variant === rawName
          ? row('vs raw driver', backend, operation, variant, stats, null, null, null)
          : row(
              'vs raw driver',
              backend,
              operation,
              variant,
              stats,
              base,
              rawName,
              variant === 'ckpt' ? target : null,
              by,
            ),
      );
    };
    rows.push(
      ...compared(`checkpoint ${label}`, write, names.insert, targets.checkpoint),
      ...compared(`load ${label}`, read, names.select, targets.load),
    );
  }
  return rows;
}

/** Sizes of the small and large databases of the scaling measurement. */
export interface Sizes {
  sessions: number;
  checkpoints: number;
}

/** Fill `store`: `sessions` one-checkpoint sessions and session 'big' with `checkpoints`. */
export async function populate(store: CheckpointStore, sizes: Sizes, parallel = 1): Promise<void> {
  const small = agentState(KIB);
  let next = 0;
  await Promise.all(
    Array.from({ length: parallel }, async () => {
      for (let i = next++; i < sizes.sessions; i = next++)
        await store.checkpoint(`session-${i}`, small);
    }),
  );
  for (let i = 0; i < sizes.checkpoints; i++) {
    await store.checkpoint('big', agentState(KIB, i), { transcript: [`user ${i}`, `agent ${i}`] });
  }
}

/** Each operation on a small database against a large one. */
export async function scaling(
  backend: string,
  stores: { small: CheckpointStore; large: CheckpointStore },
  sizes: { small: Sizes; large: Sizes },
  plan: Plan,
): Promise<Row[]> {
  const data = agentState(KIB);
  // Pages hold as many items on both sides: a session page as many as the small session has
  // checkpoints, a catalog page 50. Reads run first: the checkpoints that the write measurement
  // adds would otherwise grow the small session a hundredfold before its reads are measured.
  const perPage = sizes.small.checkpoints;
  const ops: [string, (s: CheckpointStore) => Promise<unknown>][] = [
    ['load', (s) => s.load('big')],
    [`transcript page (${perPage})`, (s) => s.transcript('big', { limit: perPage })],
    [`list page (${perPage})`, (s) => s.list('big', { limit: perPage })],
    ['sessions page (50)', (s) => s.sessions({ limit: 50 })],
    ['checkpoint', (s) => s.checkpoint('big', data, { transcript: ['user', 'agent'] })],
  ];
  const label = (s: Sizes) => `at ${s.checkpoints}/${s.sessions} checkpoints/sessions`;
  const rows: Row[] = [];
  for (const [name, op] of ops) {
    const result = await interleaved(
      [
        { name: 'small', op: () => op(stores.small) },
        { name: 'large', op: () => op(stores.large) },
      ],
      plan,
    );
    rows.push(
      row('scaling', backend, name, label(sizes.small), result.get('small')!, null, null, null),
      row(
        'scaling',
        backend,
        name,
        label(sizes.large),
        result.get('large')!,
        result.get('small')!,
        `at ${sizes.small.checkpoints}/${sizes.small.sessions}`,
        '<= 1.5x',
      ),
    );
  }
  return rows;
}

/** One agent-loop step of a peer: save `state` with `said`, then load the latest. */
export type PeerStep = (
  step: number,
  state: Record<string, unknown>,
  said: unknown[],
) => Promise<unknown>;

/** The agent loop (save a 10 KiB state with two transcript items, load the latest) on ckpt and a peer. */
export async function agentLoop(
  backend: string,
  store: CheckpointStore,
  peer: { name: string; step: PeerStep },
  plan: Plan,
): Promise<Row[]> {
  // States are made before timing: building one costs as much as saving it, on both sides.
  const states = Array.from({ length: 64 }, (_, i) => agentState(10 * KIB, i));
  const said = (i: number) => [
    { role: 'user', text: `question ${i}` },
    { role: 'agent', text: `answer ${i}` },
  ];
  const thread = `loop-${Date.now()}`;
  let step = 0;
  const result = await interleaved(
    [
      {
        name: 'ckpt',
        op: async () => {
          step++;
          await store.checkpoint(thread, states[step % states.length]!, { transcript: said(step) });
          return store.load(thread);
        },
      },
      {
        name: 'peer',
        op: () => {
          step++;
          return peer.step(step, states[step % states.length]!, said(step));
        },
      },
    ],
    plan,
  );
  const ours = result.get('ckpt')!;
  const theirs = result.get('peer')!;
  return [
    {
      group: 'vs peer',
      operation: 'agent loop step',
      backend,
      variant: 'ckpt',
      stats: ours,
      ratio: ours.opsPerSec / theirs.opsPerSec,
      ratioTo: `${peer.name} throughput`,
      target: '>= 2x',
    },
    {
      group: 'vs peer',
      operation: 'agent loop step',
      backend,
      variant: peer.name,
      stats: theirs,
      ratio: null,
      ratioTo: null,
      target: null,
    },
  ];
}
