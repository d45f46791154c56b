/**
 * What a layout of one row per checkpoint would hold on PostgreSQL, measured rather than
 * guessed: after LangGraph's steps with gzip, the same checkpoints are copied into a table of
 * that layout in the same schema (body, idempotency key and needs in the checkpoint's row; then
 * an integer session key), and the values are compressed again against the session's earlier
 * ones, to weigh each part of the design against the 4x goal before building it.
 */
import { deflateRawSync, gunzipSync } from 'node:zlib';
import { CheckpointStore, compress } from '@ckpt/core';
import { CkptSaver } from '@ckpt/langgraph';
import { postgres } from '@ckpt/postgres';
import pg from 'pg';
import { postgresSchemaBytes } from './langgraph-bench.js';
import { fillThread } from './langgraph-graph.js';

/** One measured figure, in bytes. */
export interface LayoutRow {
  part: string;
  bytes: number;
}

/** deflate's window: a dictionary longer than this is cut to its end. */
const WINDOW = 32 * 1024;

/** The value's bytes without the header `ckpt1b;<steps>;<owner>;` a backend holds them under. */
function payloadOf(held: Buffer): Buffer {
  let fields = 0;
  let at = 0;
  while (at < held.length && fields < 3) if (held[at++] === 0x3b) fields++;
  return held.subarray(at);
}

/** The bytes after `steps` of LangGraph with gzip, and what each part of the layout would hold. */
export async function layoutBound(url: string, steps: number): Promise<LayoutRow[]> {
  const ns = `bench_${Date.now().toString(36)}_layout`;
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  const store = new CheckpointStore(postgres({ pool, namespace: ns }), {
    codecs: [compress('gzip')],
  });
  const size = async (table: string) =>
    Number((await pool.query(`SELECT pg_total_relation_size('${ns}.${table}') AS n`)).rows[0].n);
  try {
    await fillThread(new CkptSaver(store), steps);
    const rows: LayoutRow[] = [
      { part: 'the schema today', bytes: await postgresSchemaBytes(pool, ns) },
    ];
    for (const table of ['checkpoints', 'bodies', 'needs', 'idempotency', 'state', 'sessions']) {
      rows.push({ part: `today: ${table}`, bytes: await size(table) });
    }
    await pool.query(`
      CREATE TABLE ${ns}.one_row (
        session_id text COLLATE "C" NOT NULL, seq bigint NOT NULL, parent bigint,
        created_at bigint NOT NULL, metadata text NOT NULL, data bytea NOT NULL,
        idempotency_key text COLLATE "C", needs bigint[], PRIMARY KEY (session_id, seq));
      ALTER TABLE ${ns}.one_row ALTER COLUMN data SET COMPRESSION lz4;
      CREATE UNIQUE INDEX ON ${ns}.one_row (session_id, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      INSERT INTO ${ns}.one_row
      SELECT c.session_id, c.seq, c.parent, c.created_at, c.metadata, b.data, i.key,
             (SELECT array_agg(n.needed ORDER BY n.needed) FROM ${ns}.needs n
               WHERE n.session_id = c.session_id AND n.seq = c.seq)
        FROM ${ns}.checkpoints c JOIN ${ns}.bodies b USING (session_id, seq)
        LEFT JOIN ${ns}.idempotency i ON i.session_id = c.session_id AND i.seq = c.seq
       ORDER BY c.session_id, c.seq;
      CREATE TABLE ${ns}.one_row_int (LIKE ${ns}.one_row);
      ALTER TABLE ${ns}.one_row_int DROP COLUMN session_id, ADD COLUMN session bigint NOT NULL,
        ADD PRIMARY KEY (session, seq);
      CREATE UNIQUE INDEX ON ${ns}.one_row_int (session, idempotency_key)
        WHERE idempotency_key IS NOT NULL;
      INSERT INTO ${ns}.one_row_int (seq, parent, created_at, metadata, data, idempotency_key,
                                     needs, session)
      SELECT seq, parent, created_at, metadata, data, idempotency_key, needs, 1
        FROM ${ns}.one_row ORDER BY seq;
    `);
    rows.push({ part: 'one row a checkpoint (body, key, needs)', bytes: await size('one_row') });
    rows.push({ part: 'the same, integer session key', bytes: await size('one_row_int') });
    const values = await pool.query<{ seq: string; parent: string | null; data: Buffer }>(
      `SELECT seq, parent, data FROM ${ns}.one_row ORDER BY seq`,
    );
    const raw = new Map<string, Buffer>();
    let alone = 0;
    let onParent = 0;
    for (const { seq, parent, data } of values.rows) {
      const payload = payloadOf(data);
      const value = gunzipSync(payload);
      raw.set(seq, value);
      alone += payload.length;
      const base = parent === null ? undefined : raw.get(parent);
      const dictionary = base?.subarray(-WINDOW);
      onParent += deflateRawSync(value, dictionary ? { dictionary } : {}).length;
    }
    rows.push({ part: 'checkpoint values, gzip each alone', bytes: alone });
    rows.push({ part: "checkpoint values, deflate on the parent's", bytes: onParent });
    const writes = await pool.query<{ n: string }>(
      `SELECT coalesce(sum(octet_length(key) + octet_length(value)), 0) AS n
         FROM ${ns}.state WHERE key LIKE 'w:%'`,
    );
    rows.push({ part: 'pending writes: keys and values alone', bytes: Number(writes.rows[0]!.n) });
    return rows;
  } finally {
    await store.close();
    await pool.query(`DROP SCHEMA IF EXISTS ${ns} CASCADE`);
    await pool.end();
  }
}
