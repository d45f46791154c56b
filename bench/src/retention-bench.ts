/**
 * Retention: sweeping a store of idle sessions of 10 checkpoints each, and pruning every session
 * to `keepLast: 2`, on SQLite and PostgreSQL, beside the raw floor (batched DELETEs on the same
 * tables). Each contender runs in a process of its own on a store filled for it (plain INSERTs
 * into ckpt's tables, not timed), so that its peak RSS is its own; two store sizes show whether
 * memory stays flat.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { postgres } from '@ckpt/postgres';
import { sqlite } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';
import { CHECKPOINTS, type RetentionContender } from './retention-plan.js';

const RUN = fileURLToPath(new URL('./retention-run.ts', import.meta.url));
const MAX_RSS = fileURLToPath(new URL('./max-rss.mjs', import.meta.url));

/** When every session was written: long before any cutoff of the sweeps. */
const BASE = Date.UTC(2026, 0, 1);
const DATA = JSON.stringify('x'.repeat(254));
const ITEMS = JSON.stringify([{ role: 'user', text: 'a message of the transcript' }]);

/** One line of the retention table. */
export interface RetentionRow {
  backend: 'sqlite' | 'postgres';
  sessions: number;
  contender: RetentionContender;
  seconds: number;
  sessionsPerSec: number;
  /** Sessions and checkpoints the contender removed. */
  removed: { sessions: number; checkpoints: number };
  peakRssMiB: number;
}

/** Fill SQLite file `path` (namespace `ckpt`) with `sessions` sessions, migrated by the backend. */
async function fillSqlite(path: string, sessions: number): Promise<void> {
  await sqlite({ path }).close();
  const db = new Database(path);
  db.pragma('synchronous = OFF');
  const n = `WITH RECURSIVE n(i) AS (SELECT 0 UNION ALL SELECT i + 1 FROM n WHERE i + 1 < ${sessions}),
    k(j) AS (SELECT 1 UNION ALL SELECT j + 1 FROM k WHERE j < ${CHECKPOINTS})`;
  const id = `printf('session-%07d', i)`;
  db.transaction(() => {
    // Values as the backend stores plain ones: the UTF-8 bytes of their JSON.
    db.prepare(
      `${n} INSERT INTO ckpt_bodies (id, data) SELECT i * ${CHECKPOINTS} + j, ? FROM n, k`,
    ).run(Buffer.from(DATA));
    db.prepare(
      `${n} INSERT INTO ckpt_transcripts (id, items) SELECT i * ${CHECKPOINTS} + j, ? FROM n, k`,
    ).run(Buffer.from(ITEMS));
    db.exec(`${n} INSERT INTO ckpt_checkpoints
      SELECT ${id}, j, nullif(j - 1, 0), ${BASE} + i * 100 + j, '{}', i * ${CHECKPOINTS} + j,
             i * ${CHECKPOINTS} + j FROM n, k`);
    db.exec(`${n} INSERT INTO ckpt_sessions (id, head, last_seq, checkpoints, head_parent,
        head_created_at, head_body, metadata, created_at, updated_at)
      SELECT ${id}, ${CHECKPOINTS}, ${CHECKPOINTS}, ${CHECKPOINTS}, ${CHECKPOINTS - 1},
             ${BASE} + i * 100 + ${CHECKPOINTS}, i * ${CHECKPOINTS} + ${CHECKPOINTS}, '{}',
             ${BASE} + i * 100, ${BASE} + i * 100 + ${CHECKPOINTS} FROM n`);
  })();
  db.exec('ANALYZE');
  db.pragma('wal_checkpoint(TRUNCATE)');
  db.close();
}

/** Fill schema `namespace` with `sessions` sessions, migrated by the backend. */
async function fillPostgres(pool: pg.Pool, url: string, namespace: string, sessions: number) {
  const backend = postgres({ url, namespace });
  await backend.ready();
  await backend.close();
  const ns = `"${namespace}"`;
  const n = `generate_series(0, ${sessions - 1}) AS i, generate_series(1, ${CHECKPOINTS}) AS j`;
  const id = `'session-' || lpad(i::text, 7, '0')`;
  await pool.query(
    `INSERT INTO ${ns}.checkpoints SELECT ${id}, j, nullif(j - 1, 0), ${BASE} + i * 100 + j, '{}' FROM ${n}`,
  );
  await pool.query(`INSERT INTO ${ns}.bodies SELECT ${id}, j, $1 FROM ${n}`, [DATA]);
  await pool.query(`INSERT INTO ${ns}.transcripts SELECT ${id}, j, $1 FROM ${n}`, [ITEMS]);
  await pool.query(`
    INSERT INTO ${ns}.sessions (id, head, last_seq, checkpoints, metadata, created_at, updated_at,
                                head_parent, head_created_at)
    SELECT ${id}, ${CHECKPOINTS}, ${CHECKPOINTS}, ${CHECKPOINTS}, '{}', ${BASE} + i * 100,
           ${BASE} + i * 100 + ${CHECKPOINTS}, ${CHECKPOINTS - 1}, ${BASE} + i * 100 + ${CHECKPOINTS}
      FROM generate_series(0, ${sessions - 1}) AS i`);
  await pool.query(
    `VACUUM (ANALYZE) ${['sessions', 'checkpoints', 'bodies', 'transcripts'].map((t) => `${ns}.${t}`).join(', ')}`,
  );
  await pool.query('CHECKPOINT');
}

/** Run one contender in a process of its own: its wall time, what it removed, its peak RSS. */
function runContender(args: string[]) {
  return new Promise<{ seconds: number; sessions: number; checkpoints: number; rssMiB: number }>(
    (resolve, reject) => {
      execFile(
        process.execPath,
        ['--import', 'tsx', '--import', MAX_RSS, RUN, ...args],
        { maxBuffer: 16 * 1024 * 1024, cwd: fileURLToPath(new URL('..', import.meta.url)) },
        (err, stdout, stderr) => {
          if (err) return reject(new Error(`retention-run ${args.join(' ')} failed: ${stderr}`));
          const rss = /maxrss (\d+)/.exec(stderr);
          resolve({
            ...JSON.parse(stdout.trim()),
            rssMiB: rss ? Number(rss[1]) / 1024 : Number.NaN,
          });
        },
      );
    },
  );
}

const ALL_CONTENDERS: RetentionContender[] = [
  'sweep native',
  'sweep portable',
  'sweep raw',
  'prune',
  'prune raw',
];

/** The retention table on each backend of `backends` (sqlite, postgres), at each of `sizes`. */
export async function benchRetention(
  backends: string[],
  dir: string,
  postgresUrl: string,
  sizes: number[],
): Promise<RetentionRow[]> {
  const rows: RetentionRow[] = [];
  // CKPT_BENCH_RETENTION names some of them, comma-separated, to run those alone.
  const only = process.env.CKPT_BENCH_RETENTION?.split(',');
  const contenders = ALL_CONTENDERS.filter((c) => only === undefined || only.includes(c));
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 1 });
  const stamp = Date.now().toString(36);
  let made = 0;
  try {
    for (const backend of ['sqlite', 'postgres'] as const) {
      if (!backends.includes(backend)) continue;
      for (const sessions of sizes) {
        for (const contender of contenders) {
          const namespace = `bench_${stamp}_retention_${made++}`;
          let where: string;
          if (backend === 'sqlite') {
            where = `${dir}/${namespace}.db`;
            await fillSqlite(where, sessions);
          } else {
            where = postgresUrl;
            await fillPostgres(pool, postgresUrl, namespace, sessions);
          }
          const ran = await runContender([
            backend,
            where,
            backend === 'sqlite' ? 'ckpt' : namespace,
            contender,
          ]);
          if (backend === 'postgres') await pool.query(`DROP SCHEMA "${namespace}" CASCADE`);
          rows.push({
            backend,
            sessions,
            contender,
            seconds: ran.seconds,
            sessionsPerSec: sessions / ran.seconds,
            removed: { sessions: ran.sessions, checkpoints: ran.checkpoints },
            peakRssMiB: ran.rssMiB,
          });
          console.log(
            `retention: ${backend} ${sessions} ${contender}: ${ran.seconds.toFixed(1)} s, ${Math.round(ran.rssMiB)} MiB`,
          );
        }
      }
    }
    return rows;
  } finally {
    await pool.end();
  }
}

const NAMES: Record<RetentionContender, string> = {
  'sweep native': 'sweep({ idleFor }), native batches',
  'sweep portable': 'sweep({ idleFor }), portable path',
  'sweep raw': 'raw floor: batched DELETE … WHERE updated_at < $1',
  prune: 'sweep({ keepLast: 2 })',
  'prune raw': 'raw floor: batched DELETE of all but the 2 highest seqs',
};

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Print the rows as a table; the ratio is the raw floor's throughput over the contender's. */
export function printRetention(rows: RetentionRow[]): void {
  if (rows.length === 0) return;
  console.log(`\nRetention: sessions of ${CHECKPOINTS} checkpoints (ratio: raw floor / contender)`);
  const floor = (row: RetentionRow) =>
    rows.find(
      (r) =>
        r.backend === row.backend &&
        r.sessions === row.sessions &&
        r.contender === (row.contender.startsWith('sweep') ? 'sweep raw' : 'prune raw'),
    );
  const header = [
    'backend',
    'sessions',
    'contender',
    'seconds',
    'sessions/s',
    'vs raw',
    'peak RSS MiB',
  ];
  const lines = rows.map((r) => [
    r.backend,
    fmt(r.sessions),
    NAMES[r.contender],
    fmt(r.seconds, 1),
    fmt(r.sessionsPerSec),
    `${fmt((floor(r)?.sessionsPerSec ?? Number.NaN) / r.sessionsPerSec, 2)}x`,
    fmt(r.peakRssMiB),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const render = (cells: string[]) =>
    cells
      .map((c, i) => (i === 0 || i === 2 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!)))
      .join('  ');
  console.log(render(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(render(l));
}
