/** Several processes on one SQLite file at once, and processes killed mid-write. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore } from '@ckpt/core';
import { SCHEMA_VERSION, sqlite } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { exited, startWorker, workerScript } from './support/child.js';
import { stepData } from './support/step-data.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-processes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('several processes on one file', () => {
  it('gives 4 processes x 250 checkpoints on one session 1,000 distinct seqs with nothing lost', async () => {
    const path = join(dir, 'shared.db');
    const acks: { tag: string; seq: number; i: number }[] = [];
    const workers = await Promise.all(
      ['p0', 'p1', 'p2', 'p3'].map((tag) =>
        startWorker(['write', path, 'shared', '250', tag], (line) => {
          const [, seq, i] = line.split(' ');
          acks.push({ tag, seq: Number(seq), i: Number(i) });
        }),
      ),
    );
    const results = await Promise.all(workers.map(exited));
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0 });

    expect(acks).toHaveLength(1000);
    expect(new Set(acks.map((a) => a.seq)).size).toBe(1000);
    expect(Math.max(...acks.map((a) => a.seq))).toBe(1000);
    const store = new CheckpointStore(sqlite({ path }));
    for (const ack of acks) {
      expect((await store.load('shared', ack.seq))?.data).toEqual(stepData(ack.tag, ack.i));
    }
    expect(await store.info('shared')).toMatchObject({ head: 1000, checkpoints: 1000 });
    expect(await store.history('shared')).toHaveLength(1000);
    await store.close();
  }, 120_000);

  it('gives 3 processes x 16 agents, each on its own session, every checkpoint they acknowledged', async () => {
    const path = join(dir, 'agents.db');
    const acks: { session: string; seq: number; i: number }[] = [];
    const workers = await Promise.all(
      ['q0', 'q1', 'q2'].map((tag) =>
        startWorker(['many', path, '16', '40', tag], (line) => {
          const [, n, seq, i] = line.split(' ');
          acks.push({ session: `${tag}-${n}`, seq: Number(seq), i: Number(i) });
        }),
      ),
    );
    const results = await Promise.all(workers.map(exited));
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0 });
    expect(acks).toHaveLength(3 * 16 * 40);
    const store = new CheckpointStore(sqlite({ path }));
    for (const ack of acks) {
      expect((await store.load(ack.session, ack.seq))?.data).toEqual(stepData(ack.session, ack.i));
      expect(ack.seq).toBe(ack.i + 1);
    }
    await store.close();
  }, 120_000);

  it('migrates a new file once when 6 processes open it at the same moment', async () => {
    const path = join(dir, 'race.db');
    await workerScript();
    const workers = await Promise.all(Array.from({ length: 6 }, () => startWorker(['open', path])));
    const results = await Promise.all(workers.map(exited));
    for (const r of results) expect(r, r.stderr).toMatchObject({ code: 0 });
    const db = new Database(path, { readonly: true });
    const version = db
      .prepare("SELECT value FROM ckpt_meta WHERE key = 'checkpoints_schema_version'")
      .get();
    expect(version).toEqual({ value: String(SCHEMA_VERSION) });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  }, 60_000);
});

/**
 * Start a worker with `args`, let it write for a random while after its first acknowledgement
 * (each line it prints goes to `onAck`), kill it without warning, and check the file is whole.
 */
async function writeThenKill(path: string, args: string[], onAck: (line: string) => void) {
  let acks = 0;
  const child = await startWorker(args, (line) => {
    onAck(line);
    acks++;
  });
  const done = exited(child);
  while (acks === 0) await new Promise((r) => setTimeout(r, 5));
  await new Promise((r) => setTimeout(r, 20 + Math.random() * 200));
  child.kill('SIGKILL');
  expect((await done).signal).toBe('SIGKILL');
  const raw = new Database(path);
  expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
  raw.close();
}

describe('a process killed at a random moment', () => {
  const KILLS = 25;

  it(`with 32 agents at once, loses nothing acknowledged and leaves nothing half-written, over ${KILLS} SIGKILLs`, async () => {
    const path = join(dir, 'crash-many.db');
    const acked = new Map<string, number>();
    let checked = 0;
    for (let round = 0; round < KILLS; round++) {
      const tag = `r${round}`;
      await writeThenKill(path, ['many', path, '32', '100000', tag], (line) => {
        const [, n, seq] = line.split(' ');
        acked.set(`${tag}-${n}`, Number(seq));
      });
      const store = new CheckpointStore(sqlite({ path }));
      for (let n = 0; n < 32; n++) {
        const session = `${tag}-${n}`;
        const info = await store.info(session);
        // Every acknowledged checkpoint is there; whatever is there (acknowledged or not) is whole.
        expect(info?.head ?? 0).toBeGreaterThanOrEqual(acked.get(session) ?? 0);
        for (const seq of await store.history(session)) {
          const cp = await store.load(session, seq);
          expect(cp?.data).toEqual(stepData(session, seq - 1));
          expect((await store.transcript(session, { limit: 1 })).items.length).toBe(1);
          checked++;
        }
      }
      await store.close();
    }
    expect(acked.size).toBeGreaterThan(KILLS);
    console.info(
      `crash test (32 agents): ${KILLS} kills, ${checked} stored checkpoints checked whole`,
    );
  }, 300_000);

  it(`loses and corrupts nothing it acknowledged, over ${KILLS} SIGKILLs`, async () => {
    const path = join(dir, 'crash.db');
    const acked = new Map<number, { tag: string; i: number }>();
    let lost = 0;
    for (let round = 0; round < KILLS; round++) {
      const tag = `round${round}`;
      await writeThenKill(path, ['write', path, 'crashy', '100000', tag], (line) => {
        const [, seq, i] = line.split(' ');
        acked.set(Number(seq), { tag, i: Number(i) });
      });
      const store = new CheckpointStore(sqlite({ path }));
      for (const [seq, { tag: t, i }] of acked) {
        const cp = await store.load('crashy', seq);
        if (JSON.stringify(cp?.data) !== JSON.stringify(stepData(t, i))) lost++;
      }
      const info = await store.info('crashy');
      expect(info).not.toBeNull();
      expect(await store.load('crashy', info!.head)).not.toBeNull();
      expect(info!.head).toBeGreaterThanOrEqual(Math.max(...acked.keys()));
      await store.close();
    }
    expect(acked.size).toBeGreaterThan(KILLS);
    expect(lost).toBe(0);
    console.info(
      `crash test: ${KILLS} kills, ${acked.size} acknowledged checkpoints checked, ${lost} lost or corrupted`,
    );
  }, 300_000);
});
