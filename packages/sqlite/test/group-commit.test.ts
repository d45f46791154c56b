/**
 * Group commit: calls waiting at the same moment share one transaction, each with its own
 * outcome; a failed COMMIT fails all of them and stores none.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, isCkptError } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { GroupCommit } from '../src/group-commit.js';
import { batchCommitter } from '../src/write-call.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-group-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = () => join(dir, `g${files++}.db`);

const code = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err) => (isCkptError(err) ? err.code : String(err)),
  );

/** WAL frames written so far: every commit adds the pages it changed. */
function walFrames(path: string): number {
  const db = new Database(path);
  const [result] = db.pragma('wal_checkpoint(PASSIVE)') as { log: number }[];
  db.close();
  return result!.log;
}

describe('group commit', () => {
  it('gives each call of one batch its own outcome, and stores none of the refused', async () => {
    const store = new CheckpointStore(sqlite({ path: file() }), { maxPayloadBytes: 10_000 });
    await store.checkpoint('stale', 1);
    await store.checkpoint('stale', 2);
    await store.checkpoint('replay', 'first', { idempotencyKey: 'k' });
    const outcomes = await Promise.all([
      code(store.checkpoint('fresh', 'a')),
      code(store.checkpoint('stale', 3, { expectedHead: 1 })),
      code(store.checkpoint('big', 'x'.repeat(20_000))),
      code(store.rollback('stale', 99)),
      code(store.checkpoint('replay', 'second', { idempotencyKey: 'k' })),
      code(store.fork('nobody', { newId: 'copy' })),
      code(store.checkpoint('fresh2', 'b')),
    ]);
    expect(outcomes).toEqual([
      'ok',
      'CONFLICT',
      'PAYLOAD_TOO_LARGE',
      'NOT_FOUND',
      'ok',
      'NOT_FOUND',
      'ok',
    ]);
    expect(await store.head('stale')).toBe(2);
    expect(await store.info('big')).toBeNull();
    expect(await store.info('copy')).toBeNull();
    expect((await store.load('replay'))?.data).toBe('first');
    expect(await store.info('replay')).toMatchObject({ checkpoints: 1 });
    expect((await store.load('fresh'))?.data).toBe('a');
    expect((await store.load('fresh2'))?.data).toBe('b');
    await store.close();
  });

  it('records the needs of the checkpoints of one batch, and a prune in it keeps them', async () => {
    const store = new CheckpointStore(sqlite({ path: file() }));
    for (let i = 0; i < 16; i++) await store.checkpoint(`agent-${i}`, { value: i });
    await Promise.all(
      Array.from({ length: 16 }, async (_, i) => {
        await store.checkpoint(`agent-${i}`, { ref: 1 }, { needs: [1] });
        await store.prune(`agent-${i}`, { keepLast: 1 });
      }),
    );
    for (let i = 0; i < 16; i++) {
      expect((await store.list(`agent-${i}`)).items.map((c) => c.seq)).toEqual([2, 1]);
      expect((await store.load(`agent-${i}`, 1))?.data).toEqual({ value: i });
    }
    await store.close();
  });

  it('commits 64 agents waiting at once in far fewer pages than one commit each', async () => {
    const frames: Record<string, number> = {};
    for (const groupCommit of [true, false]) {
      const path = file();
      const store = new CheckpointStore(sqlite({ path, groupCommit }));
      await Promise.all(
        Array.from({ length: 64 }, (_, i) => store.checkpoint(`agent-${i}`, { step: 1, i })),
      );
      frames[String(groupCommit)] = walFrames(path);
      for (let i = 0; i < 64; i++)
        expect((await store.load(`agent-${i}`))?.data).toEqual({ step: 1, i });
      await store.close();
    }
    expect(frames.true).toBeLessThan(frames.false! / 4);
  });

  it('sends the calls that waited for a commit off the event loop while its callers still resume', async () => {
    // A commit that answers later, as the writer thread does; what each batch met.
    const batches: { calls: number; resumedBefore: number }[] = [];
    let resumed = 0;
    const group = new GroupCommit((calls) => {
      batches.push({ calls: calls.length, resumedBefore: resumed });
      return new Promise((resolve) =>
        setTimeout(() => resolve(calls.map(() => ({ value: null }))), 5),
      );
    });
    const step = () => group.run({ name: 'step', args: [] }, 0);
    // 64 agents, each calling again as soon as its first call resolves.
    await Promise.all(
      Array.from({ length: 64 }, async () => {
        await step();
        resumed++;
        await step();
      }),
    );
    expect(batches[0]).toEqual({ calls: 64, resumedBefore: 0 });
    // The second batch went before every caller of the first had resumed: the event loop's
    // work for them and the next commit overlap.
    expect(batches[1]!.resumedBefore).toBeLessThan(64);
    expect(batches.reduce((sum, b) => sum + b.calls, 0)).toBe(128);
    await group.idle();
  });

  it('fails every call of a batch whose COMMIT fails, and stores none of them', async () => {
    const db = new Database(':memory:');
    db.pragma('foreign_keys = ON');
    db.exec(`CREATE TABLE parent (id INTEGER PRIMARY KEY);
             CREATE TABLE child (id INTEGER PRIMARY KEY,
               parent INTEGER REFERENCES parent(id) DEFERRABLE INITIALLY DEFERRED)`);
    const insert = db.transaction((id: number, parent: number | null) => {
      db.prepare('INSERT INTO child VALUES (?, ?)').run(id, parent);
      return id;
    });
    const group = new GroupCommit(batchCommitter(db, { insert }));
    const call = (id: number, parent: number | null) =>
      group.run({ name: 'insert', args: [id, parent] }, 0);
    // The orphan passes its own savepoint; the deferred check fails the COMMIT of all three.
    const outcomes = await Promise.allSettled([call(1, null), call(2, 404), call(3, null)]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(db.prepare('SELECT count(*) AS n FROM child').get()).toEqual({ n: 0 });
    // The next batch commits as usual.
    expect(await Promise.all([call(4, null), call(5, null)])).toEqual([4, 5]);
    db.close();
  });

  it('fails every call of a batch when one ends the transaction under the others', async () => {
    const db = new Database(':memory:');
    db.exec('CREATE TABLE t (id INTEGER PRIMARY KEY)');
    const insert = db.transaction(
      (id: number) => db.prepare('INSERT INTO t VALUES (?)').run(id).changes,
    );
    const endsIt = db.transaction(() => {
      // What SQLite does on some errors (a full disk): the whole transaction rolls back.
      db.exec('ROLLBACK');
      throw new Error('disk full');
    });
    const group = new GroupCommit(batchCommitter(db, { insert, endsIt }));
    const outcomes = await Promise.allSettled([
      group.run({ name: 'insert', args: [1] }, 0),
      group.run({ name: 'endsIt', args: [] }, 0),
      group.run({ name: 'insert', args: [2] }, 0),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual(['rejected', 'rejected', 'rejected']);
    expect(db.prepare('SELECT count(*) AS n FROM t').get()).toEqual({ n: 0 });
    db.close();
  });

  it('refuses a groupCommit that is not a boolean', () => {
    expect(() => sqlite({ path: file(), groupCommit: 'yes' as never })).toThrow(
      /groupCommit must be true or false/,
    );
  });
});
