/** Several processes on one SQLite file at once, and processes killed mid-write. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
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
    expect(version).toEqual({ value: '1' });
    expect(db.pragma('journal_mode', { simple: true })).toBe('wal');
    db.close();
  }, 60_000);
});

describe('a process killed at a random moment', () => {
  const KILLS = 25;

  it(`loses and corrupts nothing it acknowledged, over ${KILLS} SIGKILLs`, async () => {
    const path = join(dir, 'crash.db');
    const acked = new Map<number, { tag: string; i: number }>();
    let lost = 0;
    for (let round = 0; round < KILLS; round++) {
      const tag = `round${round}`;
      let acksThisRound = 0;
      const child = await startWorker(['write', path, 'crashy', '100000', tag], (line) => {
        const [, seq, i] = line.split(' ');
        acked.set(Number(seq), { tag, i: Number(i) });
        acksThisRound++;
      });
      const done = exited(child);
      // Let it write for a random while (after its first ack), then kill it without warning.
      while (acksThisRound === 0) await new Promise((r) => setTimeout(r, 5));
      await new Promise((r) => setTimeout(r, 20 + Math.random() * 200));
      child.kill('SIGKILL');
      expect((await done).signal).toBe('SIGKILL');

      const raw = new Database(path);
      expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
      raw.close();
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
