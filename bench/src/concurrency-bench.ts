/** The concurrency table on SQLite and PostgreSQL (see concurrency.ts). */
import { join } from 'node:path';
import { CheckpointStore } from '@ckpt/core';
import { postgres } from '@ckpt/postgres';
import { sqlite } from '@ckpt/sqlite';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import pg from 'pg';
import { type ConcurrencyRow, type Contender, concurrency, saverContender } from './concurrency.js';

const stamp = Date.now().toString(36);

/** ckpt's store as a contender: agent n on session `a<n>`. */
function storeContender(name: string, store: CheckpointStore): Contender {
  return {
    name,
    agent: (n) => async (_step, state, said) => {
      await store.checkpoint(`a${n}`, state as never, { transcript: said as never });
      return store.load(`a${n}`);
    },
  };
}

/** A better-sqlite3 handle with ckpt's settings: WAL, synchronous FULL. */
function database(path: string) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return db;
}

export async function sqliteConcurrency(
  dir: string,
  stepsFor: (agents: number) => number,
  rounds = 1,
): Promise<ConcurrencyRow[]> {
  const grouped = new CheckpointStore(sqlite({ path: join(dir, 'conc-ckpt.db') }));
  const onLoop = new CheckpointStore(
    sqlite({ path: join(dir, 'conc-ckpt-loop.db'), worker: false }),
  );
  const alone = new CheckpointStore(
    sqlite({ path: join(dir, 'conc-ckpt-alone.db'), groupCommit: false }),
  );
  const raw = database(join(dir, 'conc-raw.db'));
  raw.exec(`CREATE TABLE steps (session TEXT NOT NULL, seq INTEGER NOT NULL, data TEXT NOT NULL,
                                PRIMARY KEY (session, seq)) WITHOUT ROWID`);
  const insert = raw.prepare('INSERT OR REPLACE INTO steps VALUES (?, ?, ?)');
  const select = raw.prepare('SELECT data FROM steps WHERE session = ? AND seq = ?').pluck();
  const write = raw.transaction((session: string, seq: number, data: string) => {
    insert.run(session, seq, data);
  });
  const peer = database(join(dir, 'conc-langgraph.db'));
  try {
    return await concurrency(
      'sqlite',
      [
        storeContender('ckpt', grouped),
        storeContender('ckpt, worker: false', onLoop),
        storeContender('ckpt, groupCommit: false', alone),
        {
          name: 'raw better-sqlite3, a transaction a step',
          agent: (n) => async (step, state, said) => {
            write.immediate(`a${n}`, step, JSON.stringify({ state, said }));
            return JSON.parse(select.get(`a${n}`, step) as string);
          },
        },
        saverContender('@langchain/langgraph-checkpoint-sqlite', new SqliteSaver(peer)),
      ],
      stepsFor,
      rounds,
    );
  } finally {
    await grouped.close();
    await onLoop.close();
    await alone.close();
    raw.close();
    peer.close();
  }
}

export async function postgresConcurrency(
  url: string,
  stepsFor: (agents: number) => number,
  rounds = 1,
): Promise<ConcurrencyRow[]> {
  // Every contender gets a pool of the same size.
  const pools: pg.Pool[] = [];
  const pool = () => {
    const made = new pg.Pool({ connectionString: url, max: 8 });
    pools.push(made);
    return made;
  };
  const schemas = [
    `bench_${stamp}_conc`,
    `bench_${stamp}_conc_raw`,
    `bench_${stamp}_conc_lg`,
    `bench_${stamp}_conc_alone`,
  ];
  const rawPool = pool();
  await rawPool.query(`CREATE SCHEMA ${schemas[1]}`);
  await rawPool.query(
    `CREATE TABLE ${schemas[1]}.steps (session text, seq bigint, data text, PRIMARY KEY (session, seq))`,
  );
  const saver = new PostgresSaver(pool(), undefined, { schema: schemas[2] });
  await saver.setup();
  try {
    return await concurrency(
      'postgres',
      [
        storeContender(
          'ckpt',
          new CheckpointStore(postgres({ pool: pool(), namespace: schemas[0] })),
        ),
        storeContender(
          'ckpt, groupCommit: false',
          new CheckpointStore(
            postgres({ pool: pool(), namespace: schemas[3], groupCommit: false }),
          ),
        ),
        {
          name: 'raw pg, a transaction a step',
          agent: (n) => async (step, state, said) => {
            await rawPool.query(
              `INSERT INTO ${schemas[1]}.steps VALUES ($1, $2, $3)
                 ON CONFLICT (session, seq) DO UPDATE SET data = excluded.data`,
              [`a${n}`, step, JSON.stringify({ state, said })],
            );
            const { rows } = await rawPool.query(
              `SELECT data FROM ${schemas[1]}.steps WHERE session = $1 AND seq = $2`,
              [`a${n}`, step],
            );
            return JSON.parse(rows[0].data);
          },
        },
        saverContender('@langchain/langgraph-checkpoint-postgres', saver),
      ],
      stepsFor,
      rounds,
    );
  } finally {
    for (const schema of schemas) await rawPool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    for (const p of pools) await p.end();
  }
}
