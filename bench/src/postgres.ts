/** PostgreSQL: ckpt against raw pg on the same connection, its scaling, and LangGraph's saver. */
import { CheckpointStore } from '@ckpt/core';
import { SQL_TABLES } from '@ckpt/core/sql';
import { postgres } from '@ckpt/postgres';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { langgraphStep } from './langgraph.js';
import type { Plan } from './measure.js';
import type { Row } from './report.js';
import { agentLoop, populate, type Sizes, scaling, versusRaw } from './scenarios.js';

const stamp = Date.now().toString(36);

/** Every PostgreSQL measurement, in fresh schemas on the server at `url` (dropped afterwards). */
export async function benchPostgres(url: string, plan: Plan, large: Sizes): Promise<Row[]> {
  const schemas: string[] = [];
  const fresh = (name: string) => {
    const namespace = `bench_${stamp}_${name}`;
    schemas.push(namespace);
    return namespace;
  };
  const pools: pg.Pool[] = [];
  // One connection: ckpt and the raw driver take turns on the very same one.
  const openPool = (max: number, options?: string) => {
    const pool = new pg.Pool({ connectionString: url, max, ...(options ? { options } : {}) });
    pools.push(pool);
    return pool;
  };
  const rows: Row[] = [];
  try {
    const pool = openPool(1);
    const ns = fresh('raw');
    const store = new CheckpointStore(postgres({ pool, namespace: ns }));
    await store.head('warm-up'); // runs the migration
    await pool.query(`CREATE TABLE ${ns}.bench_raw (id bigserial PRIMARY KEY, data text NOT NULL)`);
    // ckpt stores payloads in lz4 columns where the server has lz4: the same INSERT into such a
    // column shows how much of a difference is the compression rather than ckpt's own work.
    const lz4 = await pool
      .query(
        `CREATE TABLE ${ns}.bench_raw_lz4 (id bigserial PRIMARY KEY, data text COMPRESSION lz4 NOT NULL)`,
      )
      .then(() => true)
      .catch(() => false);
    const insert = `INSERT INTO ${ns}.bench_raw (data) VALUES ($1) RETURNING id`;
    const select = `SELECT data FROM ${ns}.bench_raw WHERE id = $1`;
    rows.push(
      ...(await versusRaw(
        'postgres',
        store,
        {
          insert: async (encoded) => (await pool.query(insert, [encoded])).rows[0].id,
          select: async (key) => (await pool.query(select, [key])).rows[0].data,
          references: [
            // ckpt prepares its statements once per connection; pool.query(text, values) sends
            // them unnamed, parsed and planned on each call. The raw calls prepared, likewise:
            {
              name: 'prepared',
              insert: (encoded) =>
                pool.query({ name: 'bench_insert', text: insert, values: [encoded] }),
              select: (key) => pool.query({ name: 'bench_select', text: select, values: [key] }),
            },
            ...(lz4
              ? [
                  {
                    name: 'lz4 column',
                    insert: (encoded: string) =>
                      pool.query(`INSERT INTO ${ns}.bench_raw_lz4 (data) VALUES ($1)`, [encoded]),
                  },
                ]
              : []),
          ],
        },
        plan,
        { checkpoint: '<= 1.3x', load: '<= 1.2x' },
      )),
    );

    const small: Sizes = { sessions: 100, checkpoints: 10 };
    const names = { small: fresh('small'), large: fresh('large') };
    // Setup only: commits without waiting for the WAL flush; measured with the server's default.
    const filler = openPool(8, '-c synchronous_commit=off');
    await populate(
      new CheckpointStore(postgres({ pool: filler, namespace: names.small })),
      small,
      8,
    );
    await populate(
      new CheckpointStore(postgres({ pool: filler, namespace: names.large })),
      large,
      8,
    );
    await settle(filler, [names.small, names.large]);
    const measured = openPool(2);
    const stores = {
      small: new CheckpointStore(postgres({ pool: measured, namespace: names.small })),
      large: new CheckpointStore(postgres({ pool: measured, namespace: names.large })),
    };
    rows.push(...(await scaling('postgres', stores, { small, large }, plan)));

    await settle(filler, []);
    const loopPool = openPool(1);
    const saver = new PostgresSaver(openPool(1), undefined, { schema: fresh('langgraph') });
    await saver.setup();
    rows.push(
      ...(await agentLoop(
        'postgres',
        new CheckpointStore(postgres({ pool: loopPool, namespace: fresh('loop') })),
        { name: '@langchain/langgraph-checkpoint-postgres', step: langgraphStep(saver) },
        plan,
      )),
    );
  } finally {
    const admin = pools[0] ?? openPool(1);
    for (const schema of schemas)
      await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`).catch(() => {});
    for (const pool of pools) await pool.end();
  }
  return rows;
}

/**
 * Leave the server quiet before a measurement. The fill before it wrote a hundred thousand
 * sessions without waiting for the WAL; measured while autovacuum and the checkpointer work
 * that off, the next phase would time the fill rather than its own operations. VACUUM
 * (ANALYZE) also gives every filled table statistics, as autovacuum would in a deployment, so
 * that the plans measured are the ones a deployment runs. CHECKPOINT writes the dirty pages out
 * now; a user not allowed to run it leaves that to the server.
 */
async function settle(pool: pg.Pool, filled: string[]): Promise<void> {
  for (const schema of filled)
    await pool.query(`VACUUM (ANALYZE) ${SQL_TABLES.map((t) => `${schema}.${t}`).join(', ')}`);
  await pool.query('CHECKPOINT').catch(() => {});
}

/** The durability settings the PostgreSQL numbers were measured with. */
export async function postgresSettings(url: string): Promise<Record<string, unknown>> {
  const client = new pg.Client({ connectionString: url });
  await client.connect();
  try {
    const settings: Record<string, unknown> = {};
    for (const name of [
      'server_version',
      'fsync',
      'synchronous_commit',
      'wal_sync_method',
      'full_page_writes',
    ]) {
      settings[name] = (await client.query(`SHOW ${name}`)).rows[0][name];
    }
    return settings;
  } finally {
    await client.end();
  }
}
