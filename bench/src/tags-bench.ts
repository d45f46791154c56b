/**
 * Tags (`CKPT_BENCH_ONLY=tags`): a filtered page of 50, where 1% of the sessions match, as one
 * store grows from 10,000 to 1,000,000 sessions (SQLite, PostgreSQL). The index must make a
 * page cost the same at every size: a scan would cost a hundred times more at the largest.
 */
import { join } from 'node:path';
import { type CheckpointBackend, CheckpointStore } from '@ckpt/core';
import { postgres } from '@ckpt/postgres';
import { sqlite } from '@ckpt/sqlite';
import pg from 'pg';
import { fmt, printGrid } from './report.js';

/** One size of one backend: median and p99 of a page, in µs. */
export interface TagsRow {
  backend: string;
  sessions: number;
  /** The first page of `where: { tenant }` (1% of the sessions match). */
  firstPageP50Us: number;
  firstPageP99Us: number;
  /** The fifth page of the same listing, from the fourth's cursor. */
  laterPageP50Us: number;
  /** Two pairs: `{ tenant, kind }` (0.5% match). */
  twoPairsP50Us: number;
  /** The first page's median over the smallest size's. */
  ratio: number;
}

/** Tenants: each is the tag of 1% of the sessions. */
const TENANTS = 100;
const PAGE = 50;
/** Writes under way at once while the store grows. */
const WRITERS = 64;

const idOf = (i: number) => `s${String(i).padStart(8, '0')}`;
const tagsOf = (i: number) => ({
  tenant: `t${i % TENANTS}`,
  kind: Math.floor(i / TENANTS) % 2 === 0 ? 'chat' : 'run',
});

/** Grow the store from `from` sessions to `to`, each one checkpoint with its tags. */
async function grow(store: CheckpointStore, from: number, to: number): Promise<void> {
  let next = from;
  const writer = async () => {
    while (next < to) {
      const i = next++;
      await store.checkpoint(idOf(i), { i }, { tags: tagsOf(i) });
    }
  };
  await Promise.all(Array.from({ length: WRITERS }, writer));
}

function quantileUs(samples: number[], q: number): number {
  const sorted = [...samples].sort((a, b) => a - b);
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]! * 1000;
}

/** `reps` timings of `read`, in ms, after a few untimed ones. */
async function timings(reps: number, read: (rep: number) => Promise<unknown>): Promise<number[]> {
  for (let i = 0; i < 5; i++) await read(i);
  const samples: number[] = [];
  for (let i = 0; i < reps; i++) {
    const start = performance.now();
    await read(i);
    samples.push(performance.now() - start);
  }
  return samples;
}

/** The pages measured at one size, spread over the tenants so that no one page stays cached. */
async function measure(store: CheckpointStore, reps: number) {
  const tenant = (rep: number) => `t${(rep * 37) % TENANTS}`;
  const first = await timings(reps, (rep) =>
    store.sessions({ where: { tenant: tenant(rep) }, limit: PAGE }),
  );
  // The cursor of the fourth page of each tenant, read once, untimed.
  const cursors = new Map<string, string | null>();
  for (let rep = 0; rep < Math.min(reps, TENANTS); rep++) {
    let cursor: string | null = null;
    for (let page = 0; page < 4; page++) {
      cursor = (await store.sessions({ where: { tenant: tenant(rep) }, limit: PAGE, cursor }))
        .cursor;
    }
    cursors.set(tenant(rep), cursor);
  }
  const later = await timings(reps, (rep) =>
    store.sessions({
      where: { tenant: tenant(rep) },
      limit: PAGE,
      cursor: cursors.get(tenant(rep)) ?? null,
    }),
  );
  const two = await timings(reps, (rep) =>
    store.sessions({ where: { tenant: tenant(rep), kind: 'run' }, limit: PAGE }),
  );
  const page = await store.sessions({ where: { tenant: 't7' }, limit: PAGE });
  if (page.items.length !== PAGE || page.items.some((s) => s.tags.tenant !== 't7')) {
    throw new Error('tags bench: a page did not list 50 sessions of its tenant');
  }
  return { first, later, two };
}

/** One backend through every size, on one store that grows. */
async function benchOne(
  name: string,
  backend: CheckpointBackend,
  sizes: number[],
  reps: number,
): Promise<TagsRow[]> {
  const store = new CheckpointStore(backend);
  const rows: TagsRow[] = [];
  let have = 0;
  try {
    for (const size of sizes) {
      const started = performance.now();
      await grow(store, have, size);
      have = size;
      console.log(
        `  ${name}: ${fmt(size)} sessions (grown in ${fmt((performance.now() - started) / 1000, 1)} s)`,
      );
      const { first, later, two } = await measure(store, reps);
      const firstPageP50Us = quantileUs(first, 0.5);
      rows.push({
        backend: name,
        sessions: size,
        firstPageP50Us,
        firstPageP99Us: quantileUs(first, 0.99),
        laterPageP50Us: quantileUs(later, 0.5),
        twoPairsP50Us: quantileUs(two, 0.5),
        ratio: firstPageP50Us / (rows[0]?.firstPageP50Us ?? firstPageP50Us),
      });
    }
  } finally {
    await store.close();
  }
  return rows;
}

/** The rows of every backend asked for, each at every size. */
export async function benchTags(
  backends: string[],
  dir: string,
  postgresUrl: string,
  sizes: number[],
  reps: number,
): Promise<TagsRow[]> {
  const rows: TagsRow[] = [];
  if (backends.includes('sqlite')) {
    rows.push(...(await benchOne('sqlite', sqlite({ path: join(dir, 'tags.db') }), sizes, reps)));
  }
  if (backends.includes('postgres')) {
    const namespace = `bench_tags_${Date.now().toString(36)}`;
    const pool = new pg.Pool({ connectionString: postgresUrl, max: 8 });
    try {
      rows.push(...(await benchOne('postgres', postgres({ pool, namespace }), sizes, reps)));
    } finally {
      await pool.query(`DROP SCHEMA IF EXISTS ${namespace} CASCADE`).catch(() => {});
      await pool.end();
    }
  }
  return rows;
}

export function printTags(rows: TagsRow[]): void {
  printGrid(
    `Tags: a page of ${PAGE} sessions where 1% match, as the store grows (µs; ratio: first page's median over the smallest store's)`,
    ['backend', 'sessions', 'first p50', 'first p99', '5th page p50', 'two pairs p50', 'ratio'],
    rows.map((r) => [
      r.backend,
      fmt(r.sessions),
      fmt(r.firstPageP50Us),
      fmt(r.firstPageP99Us),
      fmt(r.laterPageP50Us),
      fmt(r.twoPairsP50Us),
      fmt(r.ratio, 2),
    ]),
    1,
  );
}
