/**
 * LangGraph rows: the StateGraph loop on ckpt's saver against LangGraph's official savers
 * where there is one (SQLite, PostgreSQL), at the same durability settings, and the bytes each
 * database holds after the same number of steps on a thread of its own.
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import { CheckpointStore } from '@ckpt/core';
import { CkptSaver } from '@ckpt/langgraph';
import { mysql } from '@ckpt/mysql';
import { postgres } from '@ckpt/postgres';
import { redis } from '@ckpt/redis';
import { sqlite } from '@ckpt/sqlite';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import { Redis } from 'ioredis';
import mysql2 from 'mysql2/promise';
import pg from 'pg';
import { fillThread, graphLoop } from './langgraph-graph.js';
import type { Plan } from './measure.js';
import type { Row, StorageRow } from './report.js';

const stamp = Date.now().toString(36);
const CKPT = '@ckpt/langgraph';

/** Where each server is. */
export interface Servers {
  postgres: string;
  mysql: string;
  redis: string;
}

/** Each saver's bytes on `backend`, and its ratio to those of `reference`. */
export function storageOf(
  backend: string,
  bytes: Record<string, number>,
  reference: string,
): StorageRow[] {
  const ours = bytes[reference]!;
  return Object.entries(bytes).map(([saver, n]) => ({
    backend,
    saver,
    bytes: n,
    ratio: saver === reference ? null : n / ours,
  }));
}

/** Everything in a PostgreSQL schema: its tables, their TOAST tables and their indexes. */
export async function postgresSchemaBytes(pool: pg.Pool, schema: string): Promise<number> {
  await pool.query('CHECKPOINT').catch(() => {});
  const { rows } = await pool.query(
    `SELECT coalesce(sum(pg_total_relation_size(c.oid)), 0)::bigint AS bytes
       FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'r'`,
    [schema],
  );
  return Number(rows[0].bytes);
}

/** The LangGraph rows of `backends`: throughput side by side, then storage after `steps`. */
export async function benchLangGraph(
  backends: string[],
  dir: string,
  servers: Servers,
  plan: Plan,
  steps: number,
): Promise<{ rows: Row[]; storage: StorageRow[] }> {
  const rows: Row[] = [];
  const storage: StorageRow[] = [];
  const add = (backend: string, bytes: Record<string, number>) =>
    storage.push(...storageOf(backend, bytes, CKPT));
  if (backends.includes('sqlite')) {
    rows.push(...(await sqliteThroughput(dir, plan)));
    add('sqlite', await sqliteStorage(dir, steps));
  }
  if (backends.includes('postgres')) {
    const result = await onPostgres(servers.postgres, plan, steps);
    rows.push(...result.rows);
    add('postgres', result.bytes);
  }
  if (backends.includes('mysql')) {
    const result = await onMysql(servers.mysql, plan, steps);
    rows.push(...result.rows);
    add('mysql', result.bytes);
  }
  if (backends.includes('redis')) {
    const result = await onRedis(servers.redis, plan, steps);
    rows.push(...result.rows);
    add('redis', result.bytes);
  }
  return { rows, storage };
}

/** A better-sqlite3 handle configured as ckpt's own: WAL, synchronous FULL. */
function peerDatabase(path: string) {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  return db;
}

async function sqliteThroughput(dir: string, plan: Plan): Promise<Row[]> {
  const store = new CheckpointStore(sqlite({ path: join(dir, 'graph-ckpt.db') }));
  const db = peerDatabase(join(dir, 'graph-langgraph.db'));
  try {
    return await graphLoop(
      'sqlite',
      new CkptSaver(store),
      [{ name: '@langchain/langgraph-checkpoint-sqlite', saver: new SqliteSaver(db) }],
      plan,
    );
  } finally {
    await store.close();
    db.close();
  }
}

/** The size of a SQLite database file, with its WAL written back into it first. */
function fileBytes(db: Database.Database, path: string): number {
  db.pragma('wal_checkpoint(TRUNCATE)');
  return statSync(path).size;
}

async function sqliteStorage(dir: string, steps: number): Promise<Record<string, number>> {
  const oursPath = join(dir, 'storage-ckpt.db');
  const backend = sqlite({ path: oursPath });
  const store = new CheckpointStore(backend);
  await fillThread(new CkptSaver(store), steps);
  const ours = fileBytes(backend.db, oursPath);
  await store.close();
  const theirsPath = join(dir, 'storage-langgraph.db');
  const db = peerDatabase(theirsPath);
  await fillThread(new SqliteSaver(db), steps);
  const theirs = fileBytes(db, theirsPath);
  db.close();
  return { [CKPT]: ours, '@langchain/langgraph-checkpoint-sqlite': theirs };
}

async function onPostgres(url: string, plan: Plan, steps: number) {
  const schemas: string[] = [];
  const pools: pg.Pool[] = [];
  const fresh = (name: string) => {
    const schema = `bench_${stamp}_lg_${name}`;
    schemas.push(schema);
    return schema;
  };
  const openPool = () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    pools.push(pool);
    return pool;
  };
  const admin = openPool();
  const schemaBytes = (schema: string) => postgresSchemaBytes(admin, schema);
  const peer = async (schema: string) => {
    const saver = new PostgresSaver(openPool(), undefined, { schema });
    await saver.setup();
    return saver;
  };
  try {
    const rows = await graphLoop(
      'postgres',
      new CkptSaver(new CheckpointStore(postgres({ pool: openPool(), namespace: fresh('tp') }))),
      [{ name: '@langchain/langgraph-checkpoint-postgres', saver: await peer(fresh('tp_peer')) }],
      plan,
    );
    const ours = fresh('st');
    await fillThread(
      new CkptSaver(new CheckpointStore(postgres({ pool: openPool(), namespace: ours }))),
      steps,
    );
    const theirs = fresh('st_peer');
    await fillThread(await peer(theirs), steps);
    const bytes = {
      [CKPT]: await schemaBytes(ours),
      '@langchain/langgraph-checkpoint-postgres': await schemaBytes(theirs),
    };
    return { rows, bytes };
  } finally {
    for (const schema of schemas) await admin.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
    for (const pool of pools) await pool.end();
  }
}

/** The tables of MySQL namespace `ns`. */
async function mysqlTables(pool: mysql2.Pool, ns: string): Promise<string[]> {
  const [rows] = await pool.query(
    'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?',
    [`${ns}\\_%`],
  );
  return (rows as { name: string }[]).map((r) => r.name);
}

/** Everything in MySQL namespace `ns`'s tables, data and indexes, with fresh statistics. */
export async function mysqlNamespaceBytes(pool: mysql2.Pool, ns: string): Promise<number> {
  for (const table of await mysqlTables(pool, ns)) await pool.query(`ANALYZE TABLE \`${table}\``);
  const [sized] = await pool.query(
    `SELECT coalesce(sum(data_length + index_length), 0) AS bytes FROM information_schema.tables
      WHERE table_schema = DATABASE() AND table_name LIKE ?`,
    [`${ns}\\_%`],
  );
  return Number((sized as { bytes: number }[])[0]!.bytes);
}

/** Drop MySQL namespace `ns`: its tables and procedures. */
export async function dropMysqlNamespace(pool: mysql2.Pool, ns: string): Promise<void> {
  for (const table of await mysqlTables(pool, ns)) {
    await pool.query(`DROP TABLE IF EXISTS \`${table}\``);
  }
  const [procs] = await pool.query(
    'SELECT routine_name AS name FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name LIKE ?',
    [`${ns}\\_%`],
  );
  for (const { name } of procs as { name: string }[]) {
    await pool.query(`DROP PROCEDURE IF EXISTS \`${name}\``);
  }
}

async function onMysql(url: string, plan: Plan, steps: number) {
  const pool = mysql2.createPool({ uri: url, charset: 'utf8mb4', connectionLimit: 1 });
  const namespaces = [`bench_${stamp}_lg_tp`, `bench_${stamp}_lg_st`];
  try {
    const rows = await graphLoop(
      'mysql',
      new CkptSaver(new CheckpointStore(mysql({ pool, namespace: namespaces[0]! }))),
      [],
      plan,
    );
    await fillThread(
      new CkptSaver(new CheckpointStore(mysql({ pool, namespace: namespaces[1]! }))),
      steps,
    );
    return { rows, bytes: { [CKPT]: await mysqlNamespaceBytes(pool, namespaces[1]!) } };
  } finally {
    for (const ns of namespaces) await dropMysqlNamespace(pool, ns);
    await pool.end();
  }
}

async function onRedis(url: string, plan: Plan, steps: number) {
  const client = new Redis(url);
  const namespaces = [`bench_${stamp}_lg_tp`, `bench_${stamp}_lg_st`];
  const keysOf = async (ns: string) => {
    const found: string[] = [];
    let cursor = '0';
    do {
      const [next, keys] = await client.scan(cursor, 'MATCH', `${ns}:*`, 'COUNT', 1000);
      found.push(...keys);
      cursor = next;
    } while (cursor !== '0');
    return found;
  };
  try {
    const rows = await graphLoop(
      'redis',
      new CkptSaver(new CheckpointStore(redis({ client, namespace: namespaces[0]! }))),
      [],
      plan,
    );
    await fillThread(
      new CkptSaver(new CheckpointStore(redis({ client, namespace: namespaces[1]! }))),
      steps,
    );
    let bytes = 0;
    for (const key of await keysOf(namespaces[1]!)) {
      bytes += Number(await client.memory('USAGE', key, 'SAMPLES', '0'));
    }
    return { rows, bytes: { [CKPT]: bytes } };
  } finally {
    for (const ns of namespaces) for (const key of await keysOf(ns)) await client.unlink(key);
    client.disconnect();
  }
}
