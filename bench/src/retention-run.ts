/**
 * One contender of the retention table, run in a process of its own so that its peak RSS is its
 * own: `retention-run.ts <sqlite|postgres> <path or url> <namespace> <contender>` on a store the
 * bench filled. Prints one JSON line: seconds, sessions and checkpoints removed.
 */
import { type CheckpointBackend, CheckpointStore } from '@ckpt/core';
import { postgres } from '@ckpt/postgres';
import { sqlite } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';
import { RAW_BATCH, type RetentionContender } from './retention-plan.js';

const [kind, where, namespace, contender] = process.argv.slice(2) as [
  'sqlite' | 'postgres',
  string,
  string,
  RetentionContender,
];

/** Every session of the bench is older than this. */
const IDLE_FOR = 30 * 86_400_000;

/** The backend without its native batches: a sweep then takes the portable path. */
function portable(backend: CheckpointBackend): CheckpointBackend {
  return new Proxy(backend, {
    get: (target, key) => {
      if (key === 'deleteIdleBatch') return undefined;
      const value: unknown = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** The raw floor on SQLite: batched DELETEs on the same tables, RAW_BATCH sessions a batch. */
function sqliteRaw(path: string, prune: boolean): { sessions: number; checkpoints: number } {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const t = (name: string) => `${namespace}_${name}`;
  let sessions = 0;
  let checkpoints = 0;
  if (!prune) {
    // The ids of one batch of sessions written before the cutoff, then its rows, table by table.
    const batch = `SELECT value FROM json_each(?)`;
    const pick = db
      .prepare(`SELECT id FROM ${t('sessions')} WHERE updated_at < ? ORDER BY updated_at LIMIT ?`)
      .pluck();
    const bodies = db.prepare(
      `DELETE FROM ${t('bodies')} WHERE id IN (SELECT body FROM ${t('checkpoints')} WHERE session_id IN (${batch}))`,
    );
    const transcripts = db.prepare(
      `DELETE FROM ${t('transcripts')} WHERE id IN (SELECT transcript FROM ${t('checkpoints')} WHERE session_id IN (${batch}))`,
    );
    const rows = db.prepare(`DELETE FROM ${t('checkpoints')} WHERE session_id IN (${batch})`);
    const gone = db.prepare(`DELETE FROM ${t('sessions')} WHERE id IN (${batch})`);
    const step = db.transaction((cutoff: number) => {
      const ids = JSON.stringify(pick.all(cutoff, RAW_BATCH));
      bodies.run(ids);
      transcripts.run(ids);
      checkpoints += rows.run(ids).changes;
      return gone.run(ids).changes;
    });
    for (
      let n = step.immediate(Date.now() - IDLE_FOR);
      n > 0;
      n = step.immediate(Date.now() - IDLE_FOR)
    ) {
      sessions += n;
    }
  } else {
    // One batch of sessions by id, each cut to its two highest seqs.
    const pick = db
      .prepare(`SELECT id FROM ${t('sessions')} WHERE id > ? ORDER BY id LIMIT ?`)
      .pluck();
    const old = `SELECT c.session_id, c.seq, c.body, c.transcript FROM ${t('checkpoints')} c
      JOIN ${t('sessions')} s ON s.id = c.session_id
     WHERE s.id IN (SELECT value FROM json_each(?)) AND c.seq <= s.last_seq - 2`;
    const bodies = db.prepare(`DELETE FROM ${t('bodies')} WHERE id IN (SELECT body FROM (${old}))`);
    const transcripts = db.prepare(
      `DELETE FROM ${t('transcripts')} WHERE id IN (SELECT transcript FROM (${old}))`,
    );
    const rows = db.prepare(
      `DELETE FROM ${t('checkpoints')} WHERE (session_id, seq) IN (SELECT session_id, seq FROM (${old}))`,
    );
    const counts = db.prepare(
      `UPDATE ${t('sessions')} SET checkpoints = 2 WHERE id IN (SELECT value FROM json_each(?))`,
    );
    const step = db.transaction((after: string) => {
      const batch = pick.all(after, RAW_BATCH) as string[];
      const ids = JSON.stringify(batch);
      bodies.run(ids);
      transcripts.run(ids);
      checkpoints += rows.run(ids).changes;
      counts.run(ids);
      return batch;
    });
    for (let batch = step.immediate(''); batch.length > 0; batch = step.immediate(batch.at(-1)!)) {
      sessions += batch.length;
    }
  }
  db.close();
  return { sessions: prune ? 0 : sessions, checkpoints };
}

/** The raw floor on PostgreSQL: one statement a batch, RAW_BATCH sessions a batch. */
async function postgresRaw(url: string, prune: boolean) {
  const pool = new pg.Pool({ connectionString: url, max: 1 });
  const ns = `"${namespace}"`;
  let sessions = 0;
  let checkpoints = 0;
  try {
    if (!prune) {
      const sql = `
        WITH idle AS (
          SELECT id FROM ${ns}.sessions WHERE updated_at < $1 ORDER BY updated_at, id LIMIT $2
        ), gone AS (
          DELETE FROM ${ns}.sessions s USING idle WHERE s.id = idle.id RETURNING s.id
        ), c AS (
          DELETE FROM ${ns}.checkpoints c USING gone WHERE c.session_id = gone.id RETURNING 1
        ), b AS (
          DELETE FROM ${ns}.bodies b USING gone WHERE b.session_id = gone.id
        ), x AS (
          DELETE FROM ${ns}.transcripts x USING gone WHERE x.session_id = gone.id
        )
        SELECT (SELECT count(*) FROM gone)::int AS sessions, (SELECT count(*) FROM c)::int AS checkpoints`;
      for (;;) {
        const { rows } = await pool.query(sql, [Date.now() - IDLE_FOR, RAW_BATCH]);
        if (rows[0].sessions === 0) break;
        sessions += rows[0].sessions;
        checkpoints += rows[0].checkpoints;
      }
    } else {
      const sql = `
        WITH batch AS (
          SELECT id, last_seq FROM ${ns}.sessions WHERE id > $1 ORDER BY id LIMIT $2
        ), c AS (
          DELETE FROM ${ns}.checkpoints c USING batch
           WHERE c.session_id = batch.id AND c.seq <= batch.last_seq - 2
          RETURNING c.session_id, c.seq
        ), b AS (
          DELETE FROM ${ns}.bodies b USING c WHERE b.session_id = c.session_id AND b.seq = c.seq
        ), x AS (
          DELETE FROM ${ns}.transcripts x USING c WHERE x.session_id = c.session_id AND x.seq = c.seq
        ), u AS (
          UPDATE ${ns}.sessions s SET checkpoints = 2 FROM batch WHERE s.id = batch.id
        )
        SELECT (SELECT max(id) FROM batch) AS last, (SELECT count(*) FROM c)::int AS checkpoints`;
      for (let after = ''; ; ) {
        const { rows } = await pool.query(sql, [after, RAW_BATCH]);
        if (rows[0].last === null) break;
        after = rows[0].last;
        checkpoints += rows[0].checkpoints;
      }
    }
  } finally {
    await pool.end();
  }
  return { sessions, checkpoints };
}

async function main() {
  const started = performance.now();
  let removed: { sessions: number; checkpoints: number };
  if (contender === 'sweep raw' || contender === 'prune raw') {
    const prune = contender === 'prune raw';
    removed = kind === 'sqlite' ? sqliteRaw(where, prune) : await postgresRaw(where, prune);
  } else {
    const backend =
      kind === 'sqlite' ? sqlite({ path: where, namespace }) : postgres({ url: where, namespace });
    const store = new CheckpointStore(contender === 'sweep portable' ? portable(backend) : backend);
    removed = await store.sweep(contender === 'prune' ? { keepLast: 2 } : { idleFor: IDLE_FOR });
    await store.close();
  }
  const seconds = (performance.now() - started) / 1000;
  process.stdout.write(`${JSON.stringify({ seconds, ...removed })}\n`);
}

await main();
