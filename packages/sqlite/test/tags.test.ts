/**
 * Tags on SQLite (schema step 6): the tags table follows each session row, whatever writes it;
 * a listing by tag reads through the table's index in the catalog's order; tagged calls of one
 * batch each stand alone; and a file of schema 5 takes them.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, isCkptError } from '@ckpt/core';
import type { AppendInput, Tags } from '@ckpt/core/adapter';
import type { TaggedQuery } from '@ckpt/core/sql';
import { SCHEMA_VERSION, type SqliteBackend, sqlite } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { bind } from '../src/runner.js';
import { tables } from '../src/schema.js';
import { backendStatements } from '../src/statements.js';
import { fileAtVersion } from './old-schemas.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-tags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fresh = () => join(dir, `tags-${files++}.db`);
const t = tables('ckpt');

type IndexRow = [sessionId: string, key: string, value: string, updatedAt: number];

/** The rows of the tags table, in order. */
function indexRows(db: Database.Database): IndexRow[] {
  return db
    .prepare(
      `SELECT session_id, key, value, updated_at FROM ${t.tags} ORDER BY session_id, key, value`,
    )
    .raw()
    .all() as IndexRow[];
}

/** The rows the tags table should hold: each session's tags, with its updated_at. */
function rowsOfColumns(db: Database.Database): IndexRow[] {
  return db
    .prepare(
      `SELECT s.id, j.key, j.value, s.updated_at FROM ${t.sessions} s, json_each(s.tags) j
        ORDER BY s.id, j.key, j.value`,
    )
    .raw()
    .all() as IndexRow[];
}

/** The index rows of `db`, having checked that they are what the sessions' columns say. */
function indexInStep(db: Database.Database): IndexRow[] {
  const rows = indexRows(db);
  expect(rows).toEqual(rowsOfColumns(db));
  return rows;
}

/** A checkpoint of `sessionId` at time `now`, as the store hands it to a backend. */
function appendAt(
  sessionId: string,
  now: number,
  more: Partial<AppendInput> & { tags?: Tags } = {},
): AppendInput {
  return {
    sessionId,
    data: String(now),
    metadata: '{}',
    transcript: '[]',
    expectedHead: undefined,
    idempotencyKey: undefined,
    now,
    needs: [],
    ...more,
  };
}

/** A session of one checkpoint to import, updated at `updatedAt`, replacing one of its id. */
function imported(sessionId: string, updatedAt: number, tags?: Tags) {
  return {
    sessionId,
    head: 1,
    forkedFrom: null,
    createdAt: updatedAt,
    updatedAt,
    replace: true,
    checkpoints: [
      {
        seq: 1,
        parent: null,
        createdAt: updatedAt,
        metadata: '{}',
        data: '1',
        transcript: '[]',
        needs: [],
        pinned: false,
        pinNote: null,
      },
    ],
    ...(tags && { tags }),
  };
}

describe('the tags table', () => {
  for (const worker of [false, true]) {
    it(`follows every write of a session: its tags and its updatedAt (worker: ${worker})`, async () => {
      const backend = sqlite({ path: fresh(), worker });
      const { db } = backend;
      await backend.append(appendAt('a', 1000, { tags: { status: 'open', user: 'ann' } }));
      expect(indexInStep(db)).toEqual([
        ['a', 'status', 'open', 1000],
        ['a', 'user', 'ann', 1000],
      ]);
      // A checkpoint without tags keeps them, and moves their time.
      await backend.append(appendAt('a', 2000));
      expect(indexInStep(db)).toEqual([
        ['a', 'status', 'open', 2000],
        ['a', 'user', 'ann', 2000],
      ]);
      await backend.append(appendAt('b', 1500, { tags: { user: 'ann' } }));
      await backend.append(appendAt('b', 1600, { tags: {} }));
      expect(indexInStep(db).filter(([id]) => id === 'b')).toEqual([]);
      await backend.append(appendAt('b', 1700, { tags: { user: 'bob' } }));
      // A refused and a replayed checkpoint leave them.
      await backend.append(appendAt('b', 1800, { idempotencyKey: 'k' }));
      const refused = [
        appendAt('b', 1900, { expectedHead: 99, tags: { user: 'conflict' } }),
        appendAt('b', 1900, { idempotencyKey: 'k', tags: { user: 'replayed' } }),
      ];
      for (const input of refused) {
        expect((await backend.append(input)).status).not.toBe('written');
      }
      expect(indexInStep(db).filter(([id]) => id === 'b')).toEqual([['b', 'user', 'bob', 1800]]);

      await backend.rollback({ sessionId: 'a', seq: 1, expectedHead: undefined, now: 3000 });
      await backend.fork({ sessionId: 'a', atSeq: null, newId: 'c', now: 3500 });
      expect(indexInStep(db).filter(([id]) => id !== 'b')).toEqual([
        ['a', 'status', 'open', 3000],
        ['a', 'user', 'ann', 3000],
        ['c', 'status', 'open', 3500],
        ['c', 'user', 'ann', 3500],
      ]);
      // setTags, a prune and pins change nothing of the session's time.
      expect(await backend.setTags!('c', { user: 'cy' })).toBe(true);
      expect(await backend.setTags!('nobody', { user: 'cy' })).toBe(false);
      await backend.prune('a', { keepLast: 1, createdBefore: null });
      await backend.pin({ sessionId: 'a', seq: 1, note: null });
      await backend.unpin('a', 1);
      expect(indexInStep(db).filter(([id]) => id !== 'b')).toEqual([
        ['a', 'status', 'open', 3000],
        ['a', 'user', 'ann', 3000],
        ['c', 'user', 'cy', 3500],
      ]);

      await backend.importSession(imported('d', 4000, { user: 'dee' }));
      await backend.importSession(imported('d', 4100, { agent: 'x' }));
      await backend.importSession(imported('c', 4200));
      expect(indexInStep(db).filter(([id]) => id === 'c' || id === 'd')).toEqual([
        ['d', 'agent', 'x', 4100],
      ]);

      // Every way a session goes takes its tags along.
      await backend.delete('a');
      expect((await backend.deleteIdle('b', 10_000, false)).status).toBe('deleted');
      expect(await backend.deleteIdleBatch!({ idleBefore: 10_000, limit: 10 })).toMatchObject({
        sessions: 2,
      });
      expect(indexInStep(db)).toEqual([]);
      await backend.close();
    });
  }

  it('indexes a value as it was given, whatever JSON escapes the column needs for it', async () => {
    const store = new CheckpointStore(sqlite({ path: ':memory:' }));
    const value = 'a\u0001\t\\"b\u2028😀\u007f';
    await store.checkpoint('s', 1, { tags: { name: value } });
    expect(indexInStep((store.backend as SqliteBackend).db)).toEqual([
      ['s', 'name', value, expect.any(Number)],
    ]);
    expect((await store.sessions({ where: { name: value } })).items[0]?.tags).toEqual({
      name: value,
    });
    await store.close();
  });

  it('follows the session rows that another process writes with its own SQL', async () => {
    const path = fresh();
    const backend = sqlite({ path, worker: false });
    await backend.append(appendAt('a', 1000, { tags: { user: 'ann' } }));
    await backend.append(appendAt('b', 1000, { tags: { user: 'bob' } }));
    // As a process of schema 5, still running after the upgrade, writes: it knows no tags.
    const other = new Database(path);
    other.prepare(`UPDATE ${t.sessions} SET updated_at = 5000 WHERE id = 'a'`).run();
    other.prepare(`DELETE FROM ${t.sessions} WHERE id = 'b'`).run();
    other.close();
    expect(indexInStep(backend.db)).toEqual([['a', 'user', 'ann', 5000]]);
    await backend.close();
  });

  it('takes the tagged checkpoints of one batch each in its own savepoint, on the writer thread', async () => {
    const backend = sqlite({ path: fresh() });
    const store = new CheckpointStore(backend);
    await store.checkpoint('stale', 1, { tags: { user: 'ann' } });
    const outcomes = await Promise.all(
      [
        store.checkpoint('fresh', 1, { tags: { user: 'ann', n: '1' } }),
        store.checkpoint('stale', 2, { expectedHead: 9, tags: { user: 'refused' } }),
        store.checkpoint('other', 1, { tags: { user: 'bob' } }),
        store.setTags('stale', { user: 'ann', set: 'alone' }),
      ].map((call) =>
        call.then(
          () => 'ok',
          (err) => (isCkptError(err) ? err.code : String(err)),
        ),
      ),
    );
    expect(outcomes).toEqual(['ok', 'CONFLICT', 'ok', 'ok']);
    expect(backend.writer?.thread).not.toBeNull();
    expect((await store.info('fresh'))?.tags).toEqual({ n: '1', user: 'ann' });
    expect((await store.info('stale'))?.tags).toEqual({ set: 'alone', user: 'ann' });
    const ann = await store.sessions({ where: { user: 'ann' } });
    expect(ann.items.map((s) => s.sessionId).sort()).toEqual(['fresh', 'stale']);
    expect(indexInStep(backend.db)).toHaveLength(5);
    await store.close();
  });
});

describe('a listing by tags', () => {
  /** What SQLite plans for each shape of a tagged listing on `backend`'s file, by its pairs. */
  function plans(backend: SqliteBackend): [pairs: number, plan: string[]][] {
    const { reads } = backendStatements(backend.db, t);
    const found: [number, string[]][] = [];
    for (const pairs of [1, 2, 3]) {
      for (const prefix of [false, true]) {
        for (const after of [false, true]) {
          const { sql, args } = reads.taggedSessions({ pairs, prefix, after });
          const query: TaggedQuery = {
            where: Array.from({ length: pairs }, (_, i) => [`k${i}`, 'v']),
            prefix: prefix ? 'u1/' : '',
            bound: prefix ? 'u10' : '',
            after: after ? { updatedAt: 5000, sessionId: 'u1/x' } : null,
            limit: 50,
          };
          const plan = backend.db
            .prepare(`EXPLAIN QUERY PLAN ${sql.statement.source}`)
            .all(...bind(sql, args(query))) as { detail: string }[];
          found.push([pairs, plan.map((step) => step.detail)]);
        }
      }
    }
    return found;
  }

  /**
   * That a plan walks the first pair's index entries in order, and for each looks up its
   * session and each other pair by primary key, in any order: never a scan, nor a sort.
   */
  function expectIndexWalk([pairs, plan]: [number, string[]]): void {
    const [walk, ...lookups] = plan;
    expect(walk).toMatch(
      new RegExp(`^SEARCH m USING COVERING INDEX ${t.tags}_by_tag \\(key=\\? AND value=\\?`),
    );
    expect(lookups.sort()).toEqual([
      ...Array(pairs - 1).fill('SEARCH o EXISTS USING PRIMARY KEY (session_id=? AND key=?)'),
      'SEARCH s USING PRIMARY KEY (id=?)',
    ]);
    expect(plan.join('\n')).not.toMatch(/SCAN|TEMP B-TREE/);
  }

  it('walks the index of the first pair in order: no scan of the sessions, no sort', async () => {
    const backend = sqlite({ path: ':memory:' });
    for (const plan of plans(backend)) expectIndexWalk(plan);
    await backend.close();
  });

  it('keeps to that walk once ANALYZE has seen a pair that most sessions have', async () => {
    const backend = sqlite({ path: fresh(), worker: false });
    const insert = backend.db.prepare(`
      INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_created_at, head_body,
                                 metadata, created_at, updated_at, tags)
      VALUES (?, 1, 1, 1, 0, 0, '{}', ?, ?, ?)`);
    backend.db.transaction(() => {
      for (let i = 0; i < 2000; i++) {
        insert.run(`u${i % 20}/${i}`, i, i, JSON.stringify({ k0: 'v', k1: i % 2 ? 'v' : 'w' }));
      }
    })();
    backend.db.exec('ANALYZE');
    for (const plan of plans(backend)) expectIndexWalk(plan);
    await backend.close();
  });
});

describe('schema 6', () => {
  it('comes to a file of schema 5, whose sessions read with no tags and can then be tagged and found', async () => {
    const path = fresh();
    const old = fileAtVersion(path, 5);
    for (const [i, id] of ['one', 'two', 'three'].entries()) {
      const body = Number(
        old.prepare(`INSERT INTO ${t.bodies} (data) VALUES (?)`).run(Buffer.from(String(i)))
          .lastInsertRowid,
      );
      old
        .prepare(`INSERT INTO ${t.checkpoints} VALUES (?, 1, NULL, 1000, '{}', ?, NULL)`)
        .run(id, body);
      old
        .prepare(`
          INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_parent,
            head_created_at, head_body, metadata, created_at, updated_at)
          VALUES (?, 1, 1, 1, NULL, 1000, ?, '{}', 1000, ?)`)
        .run(id, body, 1000 + i);
    }
    old.close();

    const store = new CheckpointStore(sqlite({ path }));
    const version = (store.backend as SqliteBackend).db
      .prepare(`SELECT value FROM ${t.meta} WHERE key = 'checkpoints_schema_version'`)
      .pluck()
      .get();
    expect(version).toBe(String(SCHEMA_VERSION));
    expect(SCHEMA_VERSION).toBe(6);
    expect((await store.info('one'))?.tags).toEqual({});
    expect((await store.sessions()).items.map((s) => [s.sessionId, s.tags])).toEqual([
      ['three', {}],
      ['two', {}],
      ['one', {}],
    ]);
    expect((await store.sessions({ where: { user: 'ann' } })).items).toEqual([]);
    await store.setTags('one', { user: 'ann' });
    await store.checkpoint('two', 2, { tags: { user: 'ann' } });
    expect(
      (await store.sessions({ where: { user: 'ann' } })).items.map((s) => s.sessionId),
    ).toEqual(['two', 'one']);
    expect((await store.load('three'))?.data).toBe(2);
    await store.close();
  });
});
