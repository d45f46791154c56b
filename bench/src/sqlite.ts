/** SQLite: ckpt against raw better-sqlite3 on the same connection, its scaling, and LangGraph's saver. */
import { randomUUID } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
import type { RunnableConfig } from '@langchain/core/runnables';
import { emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import { SqliteSaver } from '@langchain/langgraph-checkpoint-sqlite';
import Database from 'better-sqlite3';
import { interleaved, type Plan, type Stats } from './measure.js';
import { agentState } from './payloads.js';
import type { Row } from './report.js';

const KIB = 1024;

function ratioRow(
  group: Row['group'],
  operation: string,
  variant: string,
  stats: Stats,
  base: Stats | null,
  ratioTo: string | null,
  target: string | null,
): Row {
  return {
    group,
    operation,
    backend: 'sqlite',
    variant,
    stats,
    // Medians: a per-operation time that one slow fsync or GC pause does not swing.
    ratio: base ? stats.p50Us / base.p50Us : null,
    ratioTo,
    target,
  };
}

/** ckpt's checkpoint and load against one INSERT / one SELECT of the same bytes. */
export async function sqliteVsRaw(dir: string, plan: Plan): Promise<Row[]> {
  const backend = sqlite({ path: join(dir, 'vs-raw.db') });
  const store = new CheckpointStore(backend);
  const db = backend.db;
  db.exec('CREATE TABLE bench_raw (id INTEGER PRIMARY KEY, data TEXT NOT NULL)');
  const insert = db.prepare('INSERT INTO bench_raw (data) VALUES (?)');
  const select = db.prepare('SELECT data FROM bench_raw WHERE id = ?').pluck();
  const rows: Row[] = [];
  for (const size of [1 * KIB, 64 * KIB]) {
    const data = agentState(size);
    const encoded = JSON.stringify(data);
    const label = `${size / KIB} KiB`;
    const session = `vs-raw-${size}`;

    const write = await interleaved(
      [
        { name: 'ckpt', op: () => store.checkpoint(session, data) },
        { name: 'raw', op: () => insert.run(encoded) },
      ],
      plan,
    );
    const rawId = Number(insert.run(encoded).lastInsertRowid);
    const read = await interleaved(
      [
        { name: 'ckpt', op: () => store.load(session) },
        { name: 'raw', op: () => select.get(rawId) },
        { name: 'raw+parse', op: () => JSON.parse(select.get(rawId) as string) },
      ],
      plan,
    );
    rows.push(
      ratioRow(
        'vs raw driver',
        `checkpoint ${label}`,
        'ckpt',
        write.get('ckpt')!,
        write.get('raw')!,
        'raw INSERT',
        '<= 1.3x',
      ),
      ratioRow(
        'vs raw driver',
        `checkpoint ${label}`,
        'raw INSERT',
        write.get('raw')!,
        null,
        null,
        null,
      ),
      ratioRow(
        'vs raw driver',
        `load ${label}`,
        'ckpt',
        read.get('ckpt')!,
        read.get('raw')!,
        'raw SELECT',
        '<= 1.2x',
      ),
      ratioRow('vs raw driver', `load ${label}`, 'raw SELECT', read.get('raw')!, null, null, null),
      ratioRow(
        'vs raw driver',
        `load ${label}`,
        'raw SELECT + JSON.parse',
        read.get('raw+parse')!,
        read.get('raw')!,
        'raw SELECT',
        null,
      ),
    );
  }
  await store.close();
  return rows;
}

/** Fill a database: `sessions` sessions of one checkpoint, and session 'big' with `checkpoints`. */
async function populate(path: string, sessions: number, checkpoints: number): Promise<void> {
  // Setup only: synchronous OFF, then the measurement reopens the file with FULL.
  const store = new CheckpointStore(sqlite({ path, synchronous: 'off' }));
  const small = agentState(KIB);
  for (let i = 0; i < sessions; i++) await store.checkpoint(`session-${i}`, small);
  for (let i = 0; i < checkpoints; i++) {
    await store.checkpoint('big', agentState(KIB, i), { transcript: [`user ${i}`, `agent ${i}`] });
  }
  await store.close();
}

/** The cost of each operation on a small database against a large one. */
export async function sqliteScaling(
  dir: string,
  plan: Plan,
  large: { sessions: number; checkpoints: number },
): Promise<Row[]> {
  const small = { sessions: 100, checkpoints: 10 };
  const paths = { small: join(dir, 'small.db'), large: join(dir, 'large.db') };
  await populate(paths.small, small.sessions, small.checkpoints);
  await populate(paths.large, large.sessions, large.checkpoints);
  const stores = {
    small: new CheckpointStore(sqlite({ path: paths.small })),
    large: new CheckpointStore(sqlite({ path: paths.large })),
  };
  const data = agentState(KIB);
  const ops: [string, (s: CheckpointStore) => Promise<unknown>][] = [
    ['checkpoint', (s) => s.checkpoint('big', data, { transcript: ['user', 'agent'] })],
    ['load', (s) => s.load('big')],
    ['transcript page (50)', (s) => s.transcript('big', { limit: 50 })],
    ['list page (50)', (s) => s.list('big', { limit: 50 })],
    ['sessions page (50)', (s) => s.sessions({ limit: 50 })],
  ];
  const rows: Row[] = [];
  const sizes = `${small.checkpoints}/${small.sessions}`;
  const bigSizes = `${large.checkpoints}/${large.sessions}`;
  for (const [name, op] of ops) {
    const result = await interleaved(
      [
        { name: 'small', op: () => op(stores.small) },
        { name: 'large', op: () => op(stores.large) },
      ],
      plan,
    );
    rows.push(
      ratioRow(
        'scaling',
        name,
        `at ${sizes} checkpoints/sessions`,
        result.get('small')!,
        null,
        null,
        null,
      ),
      ratioRow(
        'scaling',
        name,
        `at ${bigSizes} checkpoints/sessions`,
        result.get('large')!,
        result.get('small')!,
        `at ${sizes}`,
        '<= 1.5x',
      ),
    );
  }
  await stores.small.close();
  await stores.large.close();
  return rows;
}

/** The agent loop (save 10 KiB state with two transcript items, load the latest) against LangGraph's SQLite saver. */
export async function sqliteAgentLoop(dir: string, plan: Plan): Promise<Row[]> {
  const store = new CheckpointStore(sqlite({ path: join(dir, 'loop-ckpt.db') }));
  // The saver gets a handle configured exactly as ours: WAL, synchronous FULL.
  const db = new Database(join(dir, 'loop-langgraph.db'));
  db.pragma('journal_mode = WAL');
  db.pragma('synchronous = FULL');
  const saver = new SqliteSaver(db);
  let step = 0;
  const thread = randomUUID();
  // States are made before timing: building one costs as much as saving it, on both sides.
  const states = Array.from({ length: 64 }, (_, i) => agentState(10 * KIB, i));
  const stateAt = (i: number) => states[i % states.length]!;
  let config: RunnableConfig = { configurable: { thread_id: thread, checkpoint_ns: '' } };
  const said = (i: number) => [
    { role: 'user', text: `question ${i}` },
    { role: 'agent', text: `answer ${i}` },
  ];
  const result = await interleaved(
    [
      {
        name: 'ckpt',
        op: async () => {
          step++;
          await store.checkpoint(thread, stateAt(step), { transcript: said(step) });
          return store.load(thread);
        },
      },
      {
        name: 'langgraph',
        op: async () => {
          step++;
          const checkpoint = {
            ...emptyCheckpoint(),
            id: uuid6(step),
            channel_values: { state: stateAt(step), messages: said(step) },
          };
          config = await saver.put(config, checkpoint, { source: 'loop', step, parents: {} });
          return saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
        },
      },
    ],
    plan,
  );
  await store.close();
  db.close();
  const ours = result.get('ckpt')!;
  const peer = result.get('langgraph')!;
  return [
    {
      group: 'vs peer',
      operation: 'agent loop step',
      backend: 'sqlite',
      variant: 'ckpt',
      stats: ours,
      ratio: ours.opsPerSec / peer.opsPerSec,
      ratioTo: 'LangGraph throughput',
      target: '>= 2x',
    },
    {
      group: 'vs peer',
      operation: 'agent loop step',
      backend: 'sqlite',
      variant: '@langchain/langgraph-checkpoint-sqlite',
      stats: peer,
      ratio: null,
      ratioTo: null,
      target: null,
    },
  ];
}

/** The durability settings the SQLite numbers were measured with. */
export function sqliteSettings(dir: string): Record<string, unknown> {
  const backend = sqlite({ path: join(dir, 'settings.db') });
  const settings = {
    journal_mode: backend.db.pragma('journal_mode', { simple: true }),
    synchronous: ['OFF', 'NORMAL', 'FULL', 'EXTRA'][
      backend.db.pragma('synchronous', { simple: true }) as number
    ],
    busy_timeout_ms: backend.db.pragma('busy_timeout', { simple: true }),
    sqlite_version: backend.db.prepare('SELECT sqlite_version()').pluck().get(),
  };
  backend.db.close();
  return settings;
}

/** A scratch directory for the SQLite files, removed afterwards. */
export function scratchDir(): { dir: string; remove: () => void } {
  const dir = mkdtempSync(join(tmpdir(), 'ckpt-bench-'));
  return { dir, remove: () => rmSync(dir, { recursive: true, force: true }) };
}
