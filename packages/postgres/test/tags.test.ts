/**
 * Tags on PostgreSQL: the tags table stays in step with the session rows through every write
 * (their triggers keep it so, whichever statement or function writes), a filtered page walks
 * tags_by_update in the catalog's order, and a store of schema version 8 takes tags once
 * upgraded.
 */
import { CheckpointStore } from '@ckpt/core';
import { sessionIdPrefixBound, storedBytesOf } from '@ckpt/core/adapter';
import type { TaggedShape } from '@ckpt/core/sql';
import { type PostgresBackend, postgres, SCHEMA_VERSION } from '@ckpt/postgres';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { schemaIdentifier } from '../src/schema.js';
import { backendStatements } from '../src/statements.js';
import { writeOldSchema } from './old-schemas.js';
import {
  adminPool,
  available,
  dropAndClose,
  freshBackend,
  namespaceToDrop,
  url,
} from './support.js';

const opened: pg.Pool[] = [];
afterAll(async () => {
  for (const pool of opened) await pool.end();
});

/**
 * The tag rows that differ from what the session rows say (a row per tag of `sessions.tags`,
 * with the session's `updated_at`), both ways: none when the index is in step.
 */
async function strayTagRows(namespace: string): Promise<unknown[]> {
  const ns = schemaIdentifier(namespace);
  const said = `SELECT s.id, j.key, j.value, s.updated_at
                  FROM ${ns}.sessions s, json_each_text(s.tags::json) AS j`;
  const held = `SELECT session_id, key, value, updated_at FROM ${ns}.tags`;
  const { rows } = await adminPool().query(
    `(${said} EXCEPT ALL ${held}) UNION ALL (${held} EXCEPT ALL ${said})`,
  );
  return rows;
}

/** How many tag rows the schema holds. */
async function tagRows(namespace: string): Promise<number> {
  const { rows } = await adminPool().query(
    `SELECT count(*)::int AS n FROM ${schemaIdentifier(namespace)}.tags`,
  );
  return rows[0].n;
}

/** The ids `where` lists, every page of 50. */
async function matching(store: CheckpointStore, where: Record<string, string>) {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.sessions({ where, cursor });
    ids.push(...page.items.map((s) => s.sessionId));
    cursor = page.cursor;
  } while (cursor !== null);
  return ids;
}

describe.skipIf(!available)('postgres tags', () => {
  it('keeps the tag rows in step with the session rows through every kind of write', async () => {
    // A pool of one connection, so that checkpoints made at once go as batches.
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    opened.push(pool);
    const backend = postgres({ pool, namespace: namespaceToDrop() });
    const store = new CheckpointStore(backend);
    const { namespace } = backend;
    const inStep = async () => expect(await strayTagRows(namespace)).toEqual([]);

    // Through append (a key), then the one-statement checkpoint (none), then batches.
    await store.checkpoint('a', 1, { tags: { user: 'ann', status: 'open' }, idempotencyKey: 'k' });
    await store.checkpoint('a', 2);
    await inStep();
    await Promise.all(
      Array.from({ length: 12 }, (_, i) =>
        store.checkpoint(`b${i}`, i, i % 2 ? { tags: { user: 'bob', n: String(i) } } : {}),
      ),
    );
    await Promise.all(Array.from({ length: 12 }, (_, i) => store.checkpoint(`b${i}`, i + 1)));
    expect(backend.batched.calls).toBeGreaterThan(2);
    await inStep();
    expect(await tagRows(namespace)).toBe(2 + 6 * 2);

    await store.rollback('a', 1);
    await store.fork('a', { newId: 'f' });
    await store.setTags('b1', { user: 'cy' });
    await store.setTags('b3', {});
    await store.checkpoint('b5', 'retagged', { tags: { status: 'done' } });
    await store.prune('a', { keepLast: 1 });
    await inStep();
    expect((await store.info('f'))?.tags).toEqual({ status: 'open', user: 'ann' });

    const exported = await store.exportSession('a');
    const checkpoints = [];
    for await (const cp of exported!.checkpoints) checkpoints.push(cp);
    await store.importSession({ ...exported!, sessionId: 'i', checkpoints });
    await store.importSession(
      { ...exported!, sessionId: 'b7', checkpoints, tags: { user: 'dee' } },
      { ifExists: 'replace' },
    );
    await inStep();

    await store.delete('f');
    expect(await backend.deleteIdle('b9', Date.now() + 60_000, false)).toMatchObject({
      status: 'deleted',
    });
    await inStep();
    // Every session left is idle an hour from now: the sweep's batch takes them all.
    await backend.deleteIdleBatch({ idleBefore: Date.now() + 3_600_000, limit: 100 });
    expect((await store.sessions()).items).toEqual([]);
    expect(await tagRows(namespace)).toBe(0);
    await dropAndClose(backend);
  });

  it('leaves no stray tag row when setTags meets checkpoints, imports and sweeps at once', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 8 });
    opened.push(pool);
    const backend = postgres({ pool, namespace: namespaceToDrop() });
    const store = new CheckpointStore(backend);
    const ids = Array.from({ length: 4 }, (_, i) => `s${i}`);
    const id = (i: number) => ids[i % ids.length]!;
    // Imported as written long ago, so that sweeps take them until a checkpoint moves them on;
    // setTags changes no time, and leaves a session a sweep may take while it is retagged.
    const idle = (i: number) =>
      store.importSession(
        {
          sessionId: id(i),
          head: 1,
          forkedFrom: null,
          createdAt: new Date(1_000),
          updatedAt: new Date(2_000),
          checkpoints: [
            {
              seq: 1,
              parent: null,
              data: i,
              metadata: {},
              transcript: [],
              createdAt: new Date(1_000),
            },
          ],
          tags: { user: 'ann', n: String(i) },
        },
        { ifExists: 'skip' },
      );
    let step = 0;
    const loop = async (work: (i: number) => Promise<unknown>) => {
      while (step < 600) await work(step++);
    };
    await Promise.all([
      loop(idle),
      loop(idle),
      ...Array.from({ length: 4 }, () =>
        loop((i) =>
          store
            .setTags(id(i * 7), i % 3 ? { user: `u${i % 5}`, n: String(i) } : {})
            .catch((err: { code?: string }) => {
              // A sweep may have deleted it meanwhile.
              if (err.code !== 'NOT_FOUND') throw err;
            }),
        ),
      ),
      // Checkpoints without tags, on a few of the sessions: one statement each, or batches
      // while the pool is busy.
      ...Array.from({ length: 2 }, () => loop((i) => store.checkpoint(id(i * 5), i))),
      loop(() => backend.deleteIdleBatch({ idleBefore: 10_000, limit: 3 })),
      loop((i) => backend.deleteIdle(id(i * 3), 10_000, false)),
    ]);
    expect(await strayTagRows(backend.namespace)).toEqual([]);
    await dropAndClose(backend);
  });

  describe('a filtered page on 100,000 sessions, 2% of them a tenant', () => {
    const PAGE = 50;
    let backend: PostgresBackend;
    let ns: string;

    /** The plan of the page `shape` for `query`, run (EXPLAIN ANALYZE): every node, flat. */
    async function plan(
      shape: TaggedShape,
      where: [string, string][],
      options: { prefix?: string; after?: { updatedAt: number; sessionId: string } } = {},
    ) {
      const { prefix = '', after = null } = options;
      const read = backendStatements(backend.namespace).reads.taggedSessions!(shape);
      const values = read.args({
        where,
        prefix,
        bound: prefix === '' ? '' : sessionIdPrefixBound(prefix),
        after,
        limit: PAGE + 1,
      });
      const { rows } = await backend.pool.query(
        `EXPLAIN (ANALYZE, FORMAT JSON) ${read.sql as string}`,
        values,
      );
      const nodes: Record<string, unknown>[] = [];
      const walk = (node: Record<string, unknown>) => {
        nodes.push(node);
        for (const child of (node.Plans as Record<string, unknown>[] | undefined) ?? []) {
          walk(child);
        }
      };
      walk(rows[0]['QUERY PLAN'][0].Plan);
      return nodes;
    }

    /** The plan walks tags_by_update in order, reading about a page of it, and sorts nothing. */
    function expectIndexWalk(nodes: Record<string, unknown>[]) {
      const types = nodes.map((node) => node['Node Type']);
      expect(types).not.toContain('Sort');
      expect(types).not.toContain('Incremental Sort');
      expect(types).not.toContain('Seq Scan');
      const walk = nodes.filter((node) => node['Index Name'] === 'tags_by_update');
      expect(walk).toHaveLength(1);
      expect(['Index Scan', 'Index Only Scan']).toContain(walk[0]!['Node Type']);
      expect(walk[0]!['Scan Direction']).toBe('Forward');
      expect(walk[0]!['Actual Rows']).toBeLessThanOrEqual(PAGE + 1);
    }

    it('walks tags_by_update in order and sorts nothing, with one pair or two, from a position or from the start', async () => {
      backend = await freshBackend();
      ns = schemaIdentifier(backend.namespace);
      // Written as rows, not checkpoints, for speed; the session rows' trigger indexes them.
      // A tenant's sessions all have its user: a planner that took the two pairs for
      // independent would expect fifty times fewer sessions with both than there are.
      await backend.pool.query(`
        INSERT INTO ${ns}.sessions (id, head, head_parent, last_seq, checkpoints, metadata,
                                    created_at, updated_at, head_created_at, tags)
        SELECT 's' || lpad(i::text, 6, '0'), 1, NULL, 1, 1, '{}', t, t, t,
               json_build_object('kind', CASE WHEN i % 3 = 0 THEN 'run' ELSE 'chat' END,
                                 'tenant', 't' || i % 50, 'user', 'u' || i % 50)::text
          FROM generate_series(0, 99999) AS i, LATERAL (SELECT 1000 + (i * 7919) % 100000 AS t) AS at`);
      // Before ANALYZE, as a table just filled is: each other pair is still checked by the
      // session's key, not by a walk of every session that has it (which the planner, without
      // statistics, chose for a table of this size).
      const rare: [string, string][] = [
        ['tenant', 't7'],
        ['kind', 'run'],
      ];
      expectIndexWalk(await plan({ pairs: 2, prefix: false, after: false }, rare));
      await backend.pool.query(`ANALYZE ${ns}.sessions, ${ns}.tags`);
      const store = new CheckpointStore(backend);
      const first = await store.sessions({ where: { tenant: 't7' }, limit: PAGE });
      expect(first.items).toHaveLength(PAGE);
      expect(first.items.every((s) => s.tags.tenant === 't7' && s.tags.user === 'u7')).toBe(true);
      const last = first.items.at(-1)!;
      const after = { updatedAt: last.updatedAt.getTime(), sessionId: last.sessionId };

      const one = { pairs: 1, prefix: false, after: false };
      expectIndexWalk(await plan(one, [['tenant', 't7']]));
      expectIndexWalk(await plan({ ...one, after: true }, [['tenant', 't7']], { after }));
      const both: [string, string][] = [
        ['tenant', 't7'],
        ['user', 'u7'],
      ];
      expectIndexWalk(await plan({ ...one, pairs: 2 }, both));
      expectIndexWalk(await plan({ pairs: 2, prefix: false, after: true }, both, { after }));
      // A prefix most sessions have is a condition of the same walk.
      expectIndexWalk(await plan({ ...one, prefix: true }, [['tenant', 't7']], { prefix: 's' }));
      await dropAndClose(backend);
    });
  });

  it('upgrades a version 8 schema: its sessions have no tags until given some, and a version 8 append goes on', async () => {
    const namespace = namespaceToDrop();
    const ns = schemaIdentifier(namespace);
    const admin = adminPool();
    await writeOldSchema(admin, namespace, 8);
    // Version 8's append, as a process of that version calls it: nine arguments.
    const append = (id: string, at: number) =>
      admin.query(
        `SELECT * FROM ${ns}.append($1, $2, '{}', '\\x5b5d', false, NULL, NULL, $3, '[]')`,
        [id, storedBytesOf(JSON.stringify({ at })), at],
      );
    await append('old', 1000);
    await append('old', 2000);
    await append('other', 1500);
    await admin.query(`SELECT * FROM ${ns}.fork('old', 1, 'forked', 2500)`);

    const backend = postgres({ url, namespace });
    const store = new CheckpointStore(backend);
    expect((await store.sessions()).items.map((s) => [s.sessionId, s.tags])).toEqual([
      ['forked', {}],
      ['old', {}],
      ['other', {}],
    ]);
    expect((await store.info('old'))?.tags).toEqual({});
    expect(await matching(store, { user: 'ann' })).toEqual([]);
    const { rows } = await admin.query(`SELECT value FROM ${ns}.meta WHERE key = 'schema_version'`);
    expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);

    await store.setTags('old', { user: 'ann' });
    await store.checkpoint('other', { at: 'now' }, { tags: { user: 'ann' } });
    await store.fork('old', { newId: 'forked-again' });
    expect(await matching(store, { user: 'ann' })).toEqual(['forked-again', 'other', 'old']);
    // A process of version 8 still running after the upgrade appends on: its call takes the
    // function's defaults (tags left as they are), and the tag rows follow the session's time.
    await append('old', Date.now() + 60_000);
    expect((await store.info('old'))?.tags).toEqual({ user: 'ann' });
    expect(await matching(store, { user: 'ann' })).toEqual(['old', 'forked-again', 'other']);
    expect(await strayTagRows(namespace)).toEqual([]);
    await dropAndClose(backend);
  });
});
