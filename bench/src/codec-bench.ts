/**
 * The codecs' rows (`CKPT_BENCH_ONLY=codecs`): per backend, a checkpoint (10 KiB, two
 * transcript items) and a load of the head with gzip, with AES-256-GCM, with both, against no
 * codecs, interleaved on one backend each; then the bytes LangGraph's 1,000 steps leave on
 * SQLite, PostgreSQL and MySQL with ckpt's compression on, against ckpt without it and the
 * official saver (MySQL has none).
 */
import { statSync } from 'node:fs';
import { join } from 'node:path';
import {
  type CheckpointBackend,
  CheckpointStore,
  type Codec,
  compress,
  encrypt,
  type StoreOptions,
} from '@ckpt/core';
import { CkptSaver } from '@ckpt/langgraph';
import { mysql } from '@ckpt/mysql';
import { postgres } from '@ckpt/postgres';
import { redis } from '@ckpt/redis';
import { sqlite } from '@ckpt/sqlite';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import mysql2 from 'mysql2/promise';
import pg from 'pg';
import {
  dropMysqlNamespace,
  mysqlNamespaceBytes,
  postgresSchemaBytes,
  type Servers,
  storageOf,
} from './langgraph-bench.js';
import { fillThread } from './langgraph-graph.js';
import { interleaved, type Plan } from './measure.js';
import { agentState } from './payloads.js';
import type { Row, StorageRow } from './report.js';

const stamp = Date.now().toString(36);
const KEY = Buffer.alloc(32, 1);

/** The codec chains measured, by the name of their row. */
const CHAINS: [string, Codec[]][] = [
  ['plain', []],
  ['gzip', [compress('gzip')]],
  ['aes-256-gcm', [encrypt({ keys: { k: KEY }, current: 'k' })]],
  ['gzip + aes-256-gcm', [compress('gzip'), encrypt({ keys: { k: KEY }, current: 'k' })]],
];

/** Checkpoint and load rows of one backend: each chain on a store of its own over `open()`. */
async function codecRows(
  backend: string,
  open: (name: string) => CheckpointBackend,
  plan: Plan,
): Promise<Row[]> {
  const stores = CHAINS.map(
    ([name, codecs], i) => [name, new CheckpointStore(open(`c${i}`), { codecs })] as const,
  );
  const state = agentState(10 * 1024);
  const transcript = [
    { role: 'user', text: 'What next?' },
    { role: 'agent', text: 'The plan, step by step.' },
  ];
  try {
    const ops = {
      'checkpoint (10 KiB)': (store: CheckpointStore) => () =>
        store.checkpoint('s', state, { transcript }),
      'load head': (store: CheckpointStore) => () => store.load('s'),
    };
    const rows: Row[] = [];
    for (const [operation, op] of Object.entries(ops)) {
      const stats = await interleaved(
        stores.map(([name, store]) => ({ name, op: op(store) })),
        plan,
        // Sessions stay short, so that the rows compare the codecs and not a session's growth.
        () => Promise.all(stores.map(([, store]) => store.prune('s', { keepLast: 10 }))),
      );
      const plain = stats.get('plain')!;
      for (const [name] of stores) {
        const s = stats.get(name)!;
        rows.push({
          group: 'codecs',
          operation,
          backend,
          variant: name,
          stats: s,
          ratio: name === 'plain' ? null : s.p50Us / plain.p50Us,
          ratioTo: name === 'plain' ? null : 'plain',
          target:
            backend === 'sqlite' && name === 'aes-256-gcm' && operation.startsWith('checkpoint')
              ? '<= 1.25x'
              : null,
        });
      }
    }
    return rows;
  } finally {
    for (const [, store] of stores) await store.destroy().catch(() => store.close());
  }
}

const gzip: StoreOptions = { codecs: [compress('gzip')] };
const CKPT = '@ckpt/langgraph';
const CKPT_GZIP = '@ckpt/langgraph, gzip';

/** Bytes after `steps` LangGraph steps: ckpt with gzip, ckpt plain, the official saver. */
async function storageRows(
  backends: string[],
  dir: string,
  servers: Servers,
  steps: number,
): Promise<StorageRow[]> {
  const rows: StorageRow[] = [];
  const add = (backend: string, bytes: Record<string, number>) =>
    rows.push(...storageOf(backend, bytes, CKPT_GZIP));
  if (backends.includes('sqlite')) {
    const file = (name: string) => join(dir, `codec-storage-${name}.db`);
    const ours = async (name: string, options: StoreOptions) => {
      const backend = sqlite({ path: file(name) });
      const store = new CheckpointStore(backend, options);
      await fillThread(new CkptSaver(store), steps);
      backend.db.pragma('wal_checkpoint(TRUNCATE)');
      await store.close();
      return statSync(file(name)).size;
    };
    const db = new Database(file('peer'));
    db.pragma('journal_mode = WAL');
    db.pragma('synchronous = FULL');
    await fillThread(new SqliteSaver(db), steps);
    db.pragma('wal_checkpoint(TRUNCATE)');
    db.close();
    add('sqlite', {
      [CKPT_GZIP]: await ours('gzip', gzip),
      [CKPT]: await ours('plain', {}),
      '@langchain/langgraph-checkpoint-sqlite': statSync(file('peer')).size,
    });
  }
  if (backends.includes('postgres')) {
    const pool = new pg.Pool({ connectionString: servers.postgres, max: 2 });
    const schemas = ['gzip', 'plain', 'peer'].map((n) => `bench_${stamp}_codec_${n}`);
    const schemaBytes = (schema: string) => postgresSchemaBytes(pool, schema);
    try {
      const ours = async (schema: string, options: StoreOptions) => {
        const store = new CheckpointStore(postgres({ pool, namespace: schema }), options);
        await fillThread(new CkptSaver(store), steps);
        return schemaBytes(schema);
      };
      const peer = new PostgresSaver(pool, undefined, { schema: schemas[2]! });
      await peer.setup();
      await fillThread(peer, steps);
      add('postgres', {
        [CKPT_GZIP]: await ours(schemas[0]!, gzip),
        [CKPT]: await ours(schemas[1]!, {}),
        '@langchain/langgraph-checkpoint-postgres': await schemaBytes(schemas[2]!),
      });
    } finally {
      for (const schema of schemas) await pool.query(`DROP SCHEMA IF EXISTS ${schema} CASCADE`);
      await pool.end();
    }
  }
  if (backends.includes('mysql')) {
    const pool = mysql2.createPool({ uri: servers.mysql, charset: 'utf8mb4', connectionLimit: 2 });
    const namespaces = ['gzip', 'plain'].map((n) => `bench_${stamp}_codec_${n}`);
    try {
      const ours = async (ns: string, options: StoreOptions) => {
        const store = new CheckpointStore(mysql({ pool, namespace: ns }), options);
        await fillThread(new CkptSaver(store), steps);
        return mysqlNamespaceBytes(pool, ns);
      };
      add('mysql', {
        [CKPT_GZIP]: await ours(namespaces[0]!, gzip),
        [CKPT]: await ours(namespaces[1]!, {}),
      });
    } finally {
      for (const ns of namespaces) await dropMysqlNamespace(pool, ns);
      await pool.end();
    }
  }
  return rows;
}

/** The codec rows of `backends`, and LangGraph's bytes after `steps` with compression on. */
export async function benchCodecs(
  backends: string[],
  dir: string,
  servers: Servers,
  plan: Plan,
  steps: number,
): Promise<{ rows: Row[]; storage: StorageRow[] }> {
  const rows: Row[] = [];
  if (backends.includes('sqlite')) {
    rows.push(
      ...(await codecRows('sqlite', (n) => sqlite({ path: join(dir, `codec-${n}.db`) }), plan)),
    );
  }
  const ns = (n: string) => `b${stamp}_codec_${n}`;
  if (backends.includes('postgres')) {
    rows.push(
      ...(await codecRows(
        'postgres',
        (n) => postgres({ url: servers.postgres, namespace: ns(n) }),
        plan,
      )),
    );
  }
  if (backends.includes('mysql')) {
    rows.push(
      ...(await codecRows('mysql', (n) => mysql({ url: servers.mysql, namespace: ns(n) }), plan)),
    );
  }
  if (backends.includes('redis')) {
    rows.push(
      ...(await codecRows('redis', (n) => redis({ url: servers.redis, namespace: ns(n) }), plan)),
    );
  }
  return { rows, storage: await storageRows(backends, dir, servers, steps) };
}
