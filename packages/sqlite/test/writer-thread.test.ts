/**
 * The writer thread: writes commit off the event loop, errors cross it as they were, a thread
 * that dies fails what it held and is replaced, and close() waits for what it holds.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, CkptError, isCkptError } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { receiveError, sendError } from '../src/thread-errors.js';
import type { WriterThread } from '../src/writer-thread.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-writer-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const file = () => join(dir, `w${files++}.db`);

const big = (i: number) => ({ i, text: `${i}:`.padEnd(64 * 1024, 'x') });

/** Turns of the event loop while `work` runs: a probe that asks for every turn counts them. */
async function turnsDuring(work: () => Promise<unknown>): Promise<number> {
  let turns = 0;
  let probing = true;
  const probe = () => {
    turns++;
    if (probing) setImmediate(probe);
  };
  setImmediate(probe);
  try {
    await work();
  } finally {
    probing = false;
  }
  return turns;
}

/** The code a call failed with, or 'ok'. */
const outcome = (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err) => (isCkptError(err) ? err.code : String(err)),
  );

describe('the writer thread', () => {
  it('commits calls that overlap on a thread of its own for a file, and on the event loop for :memory: or worker: false', async () => {
    const threaded = sqlite({ path: file() });
    const store = new CheckpointStore(threaded);
    await Promise.all([store.checkpoint('s', 1), store.checkpoint('t', 1)]);
    expect(threaded.writer?.thread).not.toBeNull();
    await store.close();
    expect(sqlite({ path: ':memory:' }).writer).toBeNull();
    const local = sqlite({ path: file(), worker: false });
    expect(local.writer).toBeNull();
    await local.close();
    expect(() => sqlite({ path: file(), worker: 'yes' as never })).toThrow(
      /worker must be true or false/,
    );
  });

  it('commits a call alone on the event loop while the thread holds nothing', async () => {
    const backend = sqlite({ path: file() });
    const store = new CheckpointStore(backend);
    for (let i = 1; i <= 5; i++) await store.checkpoint('s', i);
    await store.state('prefs').set('k', 'v');
    expect(backend.writer?.thread).toBeNull();
    expect((await store.load('s'))?.data).toBe(5);
    expect(await store.state('prefs').get('k')).toBe('v');
    await store.close();
  });

  it('answers a call alone a turn of the event loop later, so that a loop of writes leaves timers and signals their turn', async () => {
    const backend = sqlite({ path: file() });
    const store = new CheckpointStore(backend);
    const turns = await turnsDuring(async () => {
      for (let i = 0; i < 200; i++) await store.checkpoint(`s${i % 10}`, i);
    });
    // One turn a write at least (the probe's own turns besides).
    expect(turns).toBeGreaterThanOrEqual(200);
    expect(backend.writer?.thread).toBeNull();
    await store.close();
  });

  it('sends a call alone to the thread when another connection holds the write lock, and never waits for it on the event loop', async () => {
    const path = file();
    const backend = sqlite({ path });
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', 1);
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    let settled = false;
    const waiting = store.checkpoint('s', 2).then((cp) => {
      settled = true;
      return cp;
    });
    // The event loop goes on while the call waits for the lock, on the thread.
    const turns = await turnsDuring(() => new Promise((resolve) => setTimeout(resolve, 100)));
    expect(turns).toBeGreaterThan(10);
    expect(settled).toBe(false);
    expect(backend.writer?.thread).not.toBeNull();
    other.exec('COMMIT');
    other.close();
    expect((await waiting).seq).toBe(2);
    expect((await store.load('s'))?.data).toBe(2);
    await store.close();
  });

  it('lets the event loop turn while a long batch commits, where the event loop cannot', async () => {
    const turns: Record<string, number> = {};
    for (const worker of [true, false]) {
      const store = new CheckpointStore(sqlite({ path: file(), worker }));
      await store.checkpoint('warm', 0);
      // 200 checkpoints of 64 KiB waiting at once: one batch of about 13 MiB, and its fsync.
      turns[String(worker)] = await turnsDuring(() =>
        Promise.all(Array.from({ length: 200 }, (_, i) => store.checkpoint(`a${i}`, big(i)))),
      );
      for (const i of [0, 199]) expect((await store.load(`a${i}`))?.data).toEqual(big(i));
      await store.close();
    }
    // On the event loop the batch runs in one turn; the probe sees a handful at most.
    expect(turns.false).toBeLessThan(10);
    expect(turns.true).toBeGreaterThan(100);
  });

  it('fails the calls of a batch whose thread is terminated under it with BACKEND, stores none of them half, and carries on', async () => {
    const path = file();
    const backend = sqlite({ path });
    const store = new CheckpointStore(backend);
    // Two calls at once start the thread.
    await Promise.all([store.checkpoint('before', 'kept'), store.checkpoint('warm', 0)]);
    // Another connection holds the write lock, so the batch waits in its BEGIN on the thread.
    const other = new Database(path);
    other.exec('BEGIN IMMEDIATE');
    const calls = Array.from({ length: 200 }, (_, i) => store.checkpoint(`a${i}`, big(i)));
    const settled = Promise.allSettled(calls);
    const thread = backend.writer as WriterThread;
    while (thread.idle) await new Promise((r) => setImmediate(r));
    await new Promise((r) => setTimeout(r, 50));
    // Terminated while it waits; the lock let go at once, so its transaction begins and is
    // cut short at its first step, before any COMMIT.
    const dying = thread.thread!;
    const ended = dying.terminate();
    other.exec('COMMIT');
    other.close();
    await ended;
    const results = await settled;
    const failures = results.filter((r) => r.status === 'rejected');
    expect(failures.length).toBeGreaterThan(0);
    for (const failure of failures) {
      const err = (failure as PromiseRejectedResult).reason;
      expect(isCkptError(err, 'BACKEND')).toBe(true);
      expect(err.message).toMatch(/writer thread stopped .* may or may not have been stored/);
    }
    // Every checkpoint there is whole, and the file too.
    const stored = (
      await Promise.all(
        Array.from({ length: 200 }, async (_, i) => (await store.load(`a${i}`))?.data),
      )
    ).filter((data, i) => {
      if (data !== undefined) expect(data).toEqual(big(i));
      return data !== undefined;
    });
    // One transaction: the batch is all there or none of it.
    expect([0, 200]).toContain(stored.length);
    const raw = new Database(path, { readonly: true });
    expect(raw.pragma('integrity_check', { simple: true })).toBe('ok');
    raw.close();
    // The next calls start another thread, and work.
    expect((await store.checkpoint('after', 'next')).seq).toBe(1);
    expect(backend.writer!.thread).not.toBe(dying);
    expect((await store.load('before'))?.data).toBe('kept');
    expect((await store.load('after'))?.data).toBe('next');
    await store.close();
  });

  it('has close() wait for the calls the thread holds, then end it', async () => {
    const path = file();
    const backend = sqlite({ path });
    const input = (i: number) => ({
      sessionId: `c${i}`,
      data: JSON.stringify(big(i)),
      metadata: '{}',
      transcript: '[]',
      needs: [],
      now: Date.now(),
      expectedHead: undefined,
      idempotencyKey: undefined,
    });
    const appends = Array.from({ length: 50 }, (_, i) => backend.append(input(i)));
    await backend.close();
    expect((await Promise.all(appends)).map((r) => r.status)).toEqual(
      Array.from({ length: 50 }, () => 'written'),
    );
    expect(backend.writer!.thread).toBeNull();
    const store = new CheckpointStore(sqlite({ path }));
    expect((await store.load('c49'))?.data).toEqual(big(49));
    await store.close();
  });

  it("raises SQLite's errors from the thread as the event loop's connection raises them", async () => {
    const failures = [];
    for (const worker of [true, false]) {
      const path = file();
      const store = new CheckpointStore(sqlite({ path, worker }));
      await store.checkpoint('s', 1);
      const raw = new Database(path);
      raw.exec(`CREATE TRIGGER refuse BEFORE INSERT ON ckpt_bodies
                BEGIN SELECT RAISE(ABORT, 'refused by a trigger'); END`);
      raw.close();
      // Alone, and in a batch beside a call that commits.
      const [alone] = await Promise.allSettled([store.checkpoint('s', 2)]);
      const [inBatch, beside] = await Promise.allSettled([
        store.checkpoint('s', 3),
        store.state('scope').set('k', 'v'),
      ]);
      expect(beside.status).toBe('fulfilled');
      for (const result of [alone, inBatch]) {
        const err = (result as PromiseRejectedResult).reason;
        expect(isCkptError(err, 'BACKEND')).toBe(true);
        expect(err.cause).toBeInstanceOf(Database.SqliteError);
        failures.push({ message: err.message, code: err.cause.code });
      }
      expect(await store.head('s')).toBe(1);
      await store.close();
    }
    expect(failures[0]).toEqual({
      message: expect.stringMatching(/refused by a trigger/),
      code: 'SQLITE_CONSTRAINT_TRIGGER',
    });
    expect(failures.slice(0, 2)).toEqual(failures.slice(2));
  });

  it('sends a CkptError with its code, details and cause, and a system error with its code', () => {
    const cause = new Database.SqliteError('database is locked', 'SQLITE_BUSY');
    const sent = new CkptError('CONFLICT', 'the head moved', {
      details: { actualHead: 7, argument: 'expectedHead' },
      cause,
    });
    // What a message port does to what it carries.
    const back = receiveError(structuredClone(sendError(sent))) as CkptError;
    expect(isCkptError(back, 'CONFLICT')).toBe(true);
    expect(back.message).toBe('the head moved');
    expect(back.details).toEqual({ actualHead: 7, argument: 'expectedHead' });
    expect(back.actualHead).toBe(7);
    expect(back.cause).toBeInstanceOf(Database.SqliteError);
    expect((back.cause as { code: string }).code).toBe('SQLITE_BUSY');
    const system = Object.assign(new Error('no space left on device'), { code: 'ENOSPC' });
    const again = receiveError(structuredClone(sendError(system)));
    expect(again).toMatchObject({ message: 'no space left on device', code: 'ENOSPC' });
  });

  it('leaves the writes to the calls that are made alone with groupCommit: false', async () => {
    const store = new CheckpointStore(sqlite({ path: file(), groupCommit: false }));
    const codes = await Promise.all([
      outcome(store.checkpoint('s', 1)),
      outcome(store.checkpoint('s', 2, { expectedHead: 5 })),
      outcome(store.checkpoint('t', 1)),
    ]);
    expect(codes).toEqual(['ok', 'CONFLICT', 'ok']);
    expect(await store.head('s')).toBe(1);
    await store.close();
  });
});
