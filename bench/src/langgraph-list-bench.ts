/**
 * LangGraph's cross-thread `list` with a filter (`CKPT_BENCH_ONLY=tags`, PostgreSQL): the first
 * 50 checkpoints of `list({ configurable: {} }, { filter: { user_id }, limit: 50 })`, where 1%
 * of the threads are the user's, on `@ckpt/langgraph` with `tagKeys: ['user_id']` (the store's
 * tag index finds the threads), on the same store without `tagKeys` (a walk of the threads)
 * and on `PostgresSaver`, each in a schema of its own on the same server, holding the same
 * threads. Both savers are given the same checkpoints through `put`, with `user_id` in the
 * metadata handed to it (LangGraph JS leaves `invoke`'s metadata out of a checkpoint's, so a
 * graph would write it to neither; ckpt's saver copies it in from the config, PostgresSaver
 * does not). The orders differ (PostgresSaver: checkpoint_id descending across threads; ckpt:
 * threads by id, each newest first), so the rows compare times; each listing is checked to give
 * 50 checkpoints of its user. A reference row adds to PostgresSaver's table the GIN index on
 * metadata its setup does not make. The walk stops once it has 50: it reads the threads by id
 * up to about the 1,700th (17 of the user's), whatever the size.
 */
import { CheckpointStore } from '@ckpt/core';
import { CkptSaver } from '@ckpt/langgraph';
import { postgres } from '@ckpt/postgres';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  type BaseCheckpointSaver,
  type CheckpointTuple,
  emptyCheckpoint,
  uuid6,
} from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { fmt, printGrid } from './report.js';

/** One saver at one size: the first page's median and p99, in µs. */
export interface LangGraphListRow {
  saver: string;
  threads: number;
  checkpoints: number;
  reps: number;
  p50Us: number;
  p99Us: number;
  /** The median over PostgresSaver's at the same size. */
  vsPostgresSaver: number | null;
  /** The median over the same saver's at the smallest size. */
  growth: number;
}

/** Users: each has 1% of the threads. */
const USERS = 100;
const PAGE = 50;
/** Checkpoints a thread. */
const STEPS = 3;
/** Threads written at once while the stores grow. */
const WRITERS = 16;
/** Connections of each pool (the fill's, and each saver's measured one). */
const POOL = 8;

const TAGGED = '@ckpt/langgraph, tagKeys';
const WALK = '@ckpt/langgraph, no tagKeys (walks every thread)';
const PEER = '@langchain/langgraph-checkpoint-postgres';
const PEER_GIN = 'PostgresSaver + GIN index on metadata (not in its setup)';

const threadOf = (i: number) => `thread-${String(i).padStart(7, '0')}`;
const userOf = (i: number) => `u${i % USERS}`;
/** The user read by rep `rep`, spread over the users so that no one page stays cached. */
const userAt = (rep: number) => `u${(rep * 37) % USERS}`;

/** Write threads `from` to `to` through `saver`, each STEPS checkpoints of a small state. */
async function grow(saver: BaseCheckpointSaver, from: number, to: number): Promise<void> {
  let next = from;
  const writer = async () => {
    while (next < to) {
      const i = next++;
      let config: RunnableConfig = { configurable: { thread_id: threadOf(i), checkpoint_ns: '' } };
      for (let step = 0; step < STEPS; step++) {
        const checkpoint = {
          ...emptyCheckpoint(),
          id: uuid6(step),
          channel_values: { state: { thread: i, step, note: `step ${step} of thread ${i}` } },
          channel_versions: { state: step + 1 },
        };
        const metadata = { source: 'loop' as const, step, parents: {}, user_id: userOf(i) };
        config = await saver.put(config, checkpoint, metadata, { state: step + 1 });
      }
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
}

/** The first `limit` checkpoints of `user`'s threads (null: all of them), across every thread. */
async function userPage(
  saver: BaseCheckpointSaver,
  user: string,
  limit: number | null = PAGE,
): Promise<CheckpointTuple[]> {
  const found: CheckpointTuple[] = [];
  const options = { filter: { user_id: user }, ...(limit === null ? {} : { limit }) };
  for await (const tuple of saver.list({ configurable: {} }, options)) found.push(tuple);
  return found;
}

/** Refuse a listing that is not `count` checkpoints of `user`. */
function check(name: string, tuples: CheckpointTuple[], user: string, count: number): void {
  const theirs = tuples.filter((t) => (t.metadata as { user_id?: unknown })?.user_id === user);
  if (tuples.length !== count || theirs.length !== count) {
    throw new Error(
      `langgraph list bench: ${name} gave ${tuples.length} checkpoints for ${user} (${theirs.length} of them its), not ${count}`,
    );
  }
}

function quantileUs(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000;
}

/** `reps` timings (ms) of the first page of a user each, after a few untimed ones; each checked. */
async function timings(name: string, saver: BaseCheckpointSaver, reps: number): Promise<number[]> {
  for (let rep = 0; rep < Math.min(5, reps); rep++) {
    check(name, await userPage(saver, userAt(rep)), userAt(rep), PAGE);
  }
  const samples: number[] = [];
  for (let rep = 0; rep < reps; rep++) {
    const start = performance.now();
    const page = await userPage(saver, userAt(rep));
    samples.push(performance.now() - start);
    check(name, page, userAt(rep), PAGE);
  }
  return samples;
}

/** VACUUM (ANALYZE) every table of `schemas`, then CHECKPOINT, as the other PostgreSQL rows do. */
async function settle(pool: pg.Pool, schemas: string[]): Promise<void> {
  const { rows } = await pool.query<{ name: string }>(
    `SELECT quote_ident(schemaname) || '.' || quote_ident(tablename) AS name
       FROM pg_tables WHERE schemaname = ANY($1)`,
    [schemas],
  );
  if (rows.length > 0) await pool.query(`VACUUM (ANALYZE) ${rows.map((r) => r.name).join(', ')}`);
  await pool.query('CHECKPOINT').catch(() => {});
}

/**
 * The rows at each of `sizes` (threads), on stores that grow from one size to the next: the
 * tagged saver and PostgresSaver `reps` times each, the walk of every thread `walkReps` times.
 */
export async function benchLangGraphList(
  postgresUrl: string,
  sizes: number[],
  reps: number,
  walkReps: number,
): Promise<LangGraphListRow[]> {
  const stamp = Date.now().toString(36);
  const ours = `bench_lglist_${stamp}_ckpt`;
  const theirs = `bench_lglist_${stamp}_peer`;
  const pools: pg.Pool[] = [];
  const openPool = (options?: string) => {
    const pool = new pg.Pool({
      connectionString: postgresUrl,
      max: POOL,
      ...(options ? { options } : {}),
    });
    pools.push(pool);
    return pool;
  };
  // Setup only: the fill commits without waiting for the WAL flush; reads are measured apart.
  const filler = openPool('-c synchronous_commit=off');
  const fillStore = new CheckpointStore(postgres({ pool: filler, namespace: ours }));
  const fillOurs = new CkptSaver(fillStore, { tagKeys: ['user_id'] });
  const fillTheirs = new PostgresSaver(filler, undefined, { schema: theirs });
  const store = new CheckpointStore(postgres({ pool: openPool(), namespace: ours }));
  const savers: [string, BaseCheckpointSaver][] = [
    [TAGGED, new CkptSaver(store, { tagKeys: ['user_id'] })],
    [WALK, new CkptSaver(store)],
    [PEER, new PostgresSaver(openPool(), undefined, { schema: theirs })],
  ];
  const rows: LangGraphListRow[] = [];
  try {
    await fillTheirs.setup();
    let have = 0;
    for (const threads of sizes) {
      let started = performance.now();
      await grow(fillOurs, have, threads);
      const oursSeconds = (performance.now() - started) / 1000;
      started = performance.now();
      await grow(fillTheirs, have, threads);
      const theirsSeconds = (performance.now() - started) / 1000;
      have = threads;
      console.log(
        `  langgraph list: ${fmt(threads)} threads of ${STEPS} checkpoints written in ${fmt(oursSeconds, 1)} s (ckpt), ${fmt(theirsSeconds, 1)} s (PostgresSaver)`,
      );
      await settle(filler, [ours, theirs]);
      // Every checkpoint of one user, untimed: both savers hold the same ones.
      for (const [name, saver] of savers) {
        if (name === WALK) continue;
        check(name, await userPage(saver, 'u7', null), 'u7', (STEPS * threads) / USERS);
      }
      const measured = new Map<string, number[]>();
      for (const [name, saver] of savers) {
        measured.set(name, await timings(name, saver, name === WALK ? walkReps : reps));
      }
      // A reference: PostgresSaver's table with the index its setup does not make, which its
      // filter (metadata @> ...) can use. Made at this size, dropped before the next.
      const admin = pools[0]!;
      await admin.query(
        `CREATE INDEX bench_metadata ON ${theirs}.checkpoints USING gin (metadata jsonb_path_ops)`,
      );
      await admin.query(`ANALYZE ${theirs}.checkpoints`);
      measured.set(PEER_GIN, await timings(PEER_GIN, savers[2]![1], reps));
      await admin.query(`DROP INDEX ${theirs}.bench_metadata`);

      const peerP50 = quantileUs(measured.get(PEER)!, 0.5);
      for (const [name, samples] of measured) {
        const p50Us = quantileUs(samples, 0.5);
        const smallest = rows.find((r) => r.saver === name);
        rows.push({
          saver: name,
          threads,
          checkpoints: STEPS * threads,
          reps: samples.length,
          p50Us,
          p99Us: quantileUs(samples, 0.99),
          vsPostgresSaver: name === PEER ? null : p50Us / peerP50,
          growth: p50Us / (smallest?.p50Us ?? p50Us),
        });
      }
    }
  } finally {
    await store.close().catch(() => {});
    await fillStore.close().catch(() => {});
    const admin = pools[0]!;
    for (const schema of [ours, theirs])
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    for (const pool of pools) await pool.end();
  }
  return rows;
}

export function printLangGraphList(rows: LangGraphListRow[]): void {
  const order = [TAGGED, PEER, PEER_GIN, WALK];
  const sorted = [...rows].sort(
    (a, b) => order.indexOf(a.saver) - order.indexOf(b.saver) || a.threads - b.threads,
  );
  printGrid(
    `LangGraph: list({ configurable: {} }, { filter: { user_id }, limit: ${PAGE} }) across threads, 1% of them the user's, ${STEPS} checkpoints a thread (µs; vs PostgresSaver: median over its median; growth: median over the smallest size's)`,
    ['saver', 'threads', 'reps', 'p50', 'p99', 'vs PostgresSaver', 'growth'],
    sorted.map((r) => [
      r.saver,
      fmt(r.threads),
      fmt(r.reps),
      fmt(r.p50Us),
      fmt(r.p99Us),
      r.vsPostgresSaver === null ? '' : fmt(r.vsPostgresSaver, 2),
      fmt(r.growth, 2),
    ]),
    1,
  );
}
