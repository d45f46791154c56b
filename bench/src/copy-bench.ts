/**
 * `ckpt copy` of a whole SQLite store into PostgreSQL: sessions of 10 checkpoints each, the
 * built command run as a child process (its wall time and peak RSS), beside a raw bulk copy
 * of the same rows: read from SQLite a batch at a time, written to plain PostgreSQL tables
 * with one `INSERT … SELECT FROM unnest(…)` per table and batch. Two store sizes, to show
 * that the command's memory does not grow with the store.
 */
import { execFile } from 'node:child_process';
import { fileURLToPath } from 'node:url';
import { CheckpointStore, type ExportedCheckpoint } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';

const CLI = fileURLToPath(new URL('../../packages/cli/dist/cli.js', import.meta.url));
const MAX_RSS = fileURLToPath(new URL('./max-rss.mjs', import.meta.url));
const CHECKPOINTS = 10;

/** One line of the copy table. */
export interface CopyRow {
  sessions: number;
  checkpoints: number;
  contender: string;
  seconds: number;
  sessionsPerSec: number;
  checkpointsPerSec: number;
  /** Peak resident memory of the copying process, in MiB (the child's, for ckpt copy). */
  peakRssMiB: number | null;
}

/** A SQLite store of `sessions` sessions of 10 checkpoints (a 256-byte state and an item each). */
async function fillSource(path: string, sessions: number): Promise<void> {
  const store = new CheckpointStore(sqlite({ path }));
  const base = Date.UTC(2026, 0, 1);
  let next = 0;
  const worker = async () => {
    for (let s = next++; s < sessions; s = next++) {
      const checkpoints: ExportedCheckpoint[] = Array.from({ length: CHECKPOINTS }, (_, i) => ({
        seq: i + 1,
        parent: i === 0 ? null : i,
        data: { session: s, step: i + 1, note: 'x'.repeat(200) },
        metadata: { step: i + 1 },
        transcript: [{ role: i % 2 ? 'agent' : 'user', text: `message ${i + 1}` }],
        createdAt: new Date(base + s * 1000 + i),
      }));
      await store.importSession({
        sessionId: `session-${s}`,
        head: CHECKPOINTS,
        forkedFrom: null,
        createdAt: new Date(base + s * 1000),
        updatedAt: new Date(base + s * 1000 + CHECKPOINTS),
        checkpoints,
      });
    }
  };
  await Promise.all(Array.from({ length: 64 }, worker));
  await store.close();
}

/** Run the built `ckpt` with `args`: its wall time and peak RSS. */
function runCli(args: string[]): Promise<{ seconds: number; rssMiB: number }> {
  const started = performance.now();
  return new Promise((resolve, reject) => {
    execFile(
      process.execPath,
      ['--import', MAX_RSS, CLI, ...args],
      { maxBuffer: 16 * 1024 * 1024 },
      (err, _stdout, stderr) => {
        if (err) return reject(new Error(`ckpt ${args.join(' ')} failed: ${stderr}`));
        const rss = /maxrss (\d+)/.exec(stderr);
        resolve({
          seconds: (performance.now() - started) / 1000,
          rssMiB: rss ? Number(rss[1]) / 1024 : Number.NaN,
        });
      },
    );
  });
}

/** Copy the rows of the SQLite store at `path` into plain tables of `schema`, in batches. */
async function rawCopy(path: string, pool: pg.Pool, schema: string): Promise<number> {
  await pool.query(`CREATE SCHEMA ${schema}`);
  await pool.query(`
    CREATE TABLE ${schema}.sessions (id text PRIMARY KEY, head bigint, checkpoints bigint,
      metadata text, created_at bigint, updated_at bigint);
    CREATE TABLE ${schema}.checkpoints (session_id text, seq bigint, parent bigint,
      created_at bigint, metadata text, data text, transcript text, PRIMARY KEY (session_id, seq));`);
  const db = new Database(path, { readonly: true });
  const started = performance.now();
  const batch = 5000;
  const copyRows = async (sql: string, insert: string, columns: string[]) => {
    let rows: Record<string, unknown>[] = [];
    const flush = async () => {
      if (rows.length === 0) return;
      await pool.query(
        insert,
        columns.map((c) => rows.map((r) => r[c])),
      );
      rows = [];
    };
    for (const row of db.prepare(sql).iterate() as IterableIterator<Record<string, unknown>>) {
      rows.push(row);
      if (rows.length === batch) await flush();
    }
    await flush();
  };
  await copyRows(
    'SELECT id, head, checkpoints, metadata, created_at, updated_at FROM ckpt_sessions',
    `INSERT INTO ${schema}.sessions SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::text[], $5::bigint[], $6::bigint[])`,
    ['id', 'head', 'checkpoints', 'metadata', 'created_at', 'updated_at'],
  );
  // The store holds plain values as the UTF-8 bytes of their JSON; the plain tables, as text.
  await copyRows(
    `SELECT c.session_id, c.seq, c.parent, c.created_at, c.metadata,
            CAST(b.data AS TEXT) AS data, CAST(x.items AS TEXT) AS transcript
       FROM ckpt_checkpoints c JOIN ckpt_bodies b ON b.id = c.body
       LEFT JOIN ckpt_transcripts x ON x.id = c.transcript`,
    `INSERT INTO ${schema}.checkpoints SELECT * FROM unnest($1::text[], $2::bigint[], $3::bigint[], $4::bigint[], $5::text[], $6::text[], $7::text[])`,
    ['session_id', 'seq', 'parent', 'created_at', 'metadata', 'data', 'transcript'],
  );
  db.close();
  return (performance.now() - started) / 1000;
}

/** The copy table for stores of each size in `sizes`. */
export async function benchCopy(
  dir: string,
  postgresUrl: string,
  sizes: number[],
): Promise<CopyRow[]> {
  const rows: CopyRow[] = [];
  const pool = new pg.Pool({ connectionString: postgresUrl, max: 2 });
  const stamp = Date.now().toString(36);
  const schemas: string[] = [];
  try {
    for (const sessions of sizes) {
      const path = `${dir}/copy-${sessions}.db`;
      await fillSource(path, sessions);
      const checkpoints = sessions * CHECKPOINTS;
      const row = (contender: string, seconds: number, peakRssMiB: number | null): CopyRow => ({
        sessions,
        checkpoints,
        contender,
        seconds,
        sessionsPerSec: sessions / seconds,
        checkpointsPerSec: checkpoints / seconds,
        peakRssMiB,
      });
      const namespace = `bench_${stamp}_copy_${sessions}`;
      schemas.push(namespace);
      const target = `${postgresUrl}${postgresUrl.includes('?') ? '&' : '?'}namespace=${namespace}`;
      const copied = await runCli(['copy', '--from', `sqlite:${path}`, '--to', target]);
      rows.push(row('ckpt copy (sqlite → postgres)', copied.seconds, copied.rssMiB));
      const raw = `bench_${stamp}_raw_${sessions}`;
      schemas.push(raw);
      rows.push(
        row('raw INSERT … SELECT unnest, 5,000 rows a batch', await rawCopy(path, pool, raw), null),
      );
    }
    return rows;
  } finally {
    for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    await pool.end();
  }
}

const fmt = (n: number, digits = 0) =>
  n.toLocaleString('en-US', { maximumFractionDigits: digits, minimumFractionDigits: digits });

/** Print the rows as a table. */
export function printCopy(rows: CopyRow[]): void {
  if (rows.length === 0) return;
  console.log(`\nCopy: a SQLite store into PostgreSQL (sessions of ${CHECKPOINTS} checkpoints)`);
  const header = [
    'sessions',
    'contender',
    'seconds',
    'sessions/s',
    'checkpoints/s',
    'peak RSS MiB',
  ];
  const lines = rows.map((r) => [
    fmt(r.sessions),
    r.contender,
    fmt(r.seconds, 1),
    fmt(r.sessionsPerSec),
    fmt(r.checkpointsPerSec),
    r.peakRssMiB === null ? '' : fmt(r.peakRssMiB),
  ]);
  const widths = header.map((h, i) => Math.max(h.length, ...lines.map((l) => l[i]!.length)));
  const render = (cells: string[]) =>
    cells.map((c, i) => (i === 1 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  console.log(render(header));
  console.log(widths.map((w) => '-'.repeat(w)).join('  '));
  for (const l of lines) console.log(render(l));
}
