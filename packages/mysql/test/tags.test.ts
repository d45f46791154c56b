/**
 * Tags on MySQL / MariaDB (schema step 11): the index table stays in step with the session rows
 * through every write (the schema's triggers), a filtered page walks the index in the catalog's
 * order without a sort, setTags logs no change, and a namespace of schema 10 upgrades with its
 * sessions untagged, while a process of version 10 still writes to it.
 */
import { CheckpointStore } from '@ckpt/core';
import { positionalValues } from '@ckpt/core/sql';
import { type MysqlBackend, mysql, SCHEMA_VERSION } from '@ckpt/mysql';
import { describe, expect, it } from 'vitest';
import { tables } from '../src/schema.js';
import { backendStatements } from '../src/statements.js';
import { versionTenProcedures, writeOldTables } from './old-schemas.js';
import {
  adminPool,
  available,
  dropAndClose,
  freshBackend,
  namespaceToDrop,
  url,
} from './support.js';

async function query<Row>(sql: string, values: unknown[] = []): Promise<Row[]> {
  const [rows] = (await adminPool().query(sql, values)) as unknown as [Row[]];
  return rows;
}

/**
 * Where the tags table of `ns` and its session rows disagree: a tag row whose session is gone,
 * whose updated_at is not its session's, or that the session's tags column does not hold; a
 * tag of a session's column without its row. Empty when the index is right.
 */
async function indexDrift(ns: string): Promise<string[]> {
  const t = tables(ns);
  const rows = await query<{ id: Buffer; tags: string | null; updated_at: number }>(
    `SELECT id, tags, updated_at FROM ${t.sessions}`,
  );
  const want = new Set<string>();
  for (const row of rows) {
    for (const [key, value] of Object.entries(JSON.parse(row.tags ?? '{}'))) {
      want.add(JSON.stringify([row.id.toString(), key, value, Number(row.updated_at)]));
    }
  }
  const held = await query<{ session_id: Buffer; k: Buffer; value: Buffer; updated_at: number }>(
    `SELECT session_id, k, value, updated_at FROM ${t.tags}`,
  );
  const have = new Set(
    held.map((row) =>
      JSON.stringify([
        row.session_id.toString(),
        row.k.toString(),
        row.value.toString(),
        Number(row.updated_at),
      ]),
    ),
  );
  return [
    ...[...want].filter((row) => !have.has(row)).map((row) => `missing ${row}`),
    ...[...have].filter((row) => !want.has(row)).map((row) => `stray ${row}`),
  ];
}

/** The plan MariaDB or MySQL gives `sql`: one row a table. */
async function plan(sql: string, values: unknown[]) {
  return query<{ table: string; key: string | null; Extra: string | null }>(
    `EXPLAIN ${sql}`,
    values,
  );
}

describe.skipIf(!available)('mysql tags', () => {
  it('keeps the index in step with the session rows through every write, and setTags logs no change', async () => {
    const backend = await freshBackend();
    const store = new CheckpointStore(backend);
    const ns = backend.namespace;
    await store.checkpoint('a', 1, { tags: { user: 'ann', status: 'open' } });
    await store.checkpoint('a', 2);
    await store.checkpoint('a', 3, { tags: { user: 'ann' } });
    await store.rollback('a', 2);
    await store.fork('a', { newId: 'b' });
    const { seq } = await store.checkpoint('b', 4);
    await store.prune('a', { keepLast: 1 });
    await store.pin('b', seq);
    const exported = (await store.exportSession('a'))!;
    const checkpoints = [];
    for await (const cp of exported.checkpoints) checkpoints.push(cp);
    await store.importSession({ ...exported, sessionId: 'c', checkpoints });
    await store.importSession(
      { ...exported, sessionId: 'c', checkpoints, updatedAt: new Date(5), tags: { user: 'cy' } },
      { ifExists: 'replace' },
    );
    await store.checkpoint('d', 1);
    expect(await indexDrift(ns)).toEqual([]);

    const changes = async () =>
      (await query<{ n: number }>(`SELECT COUNT(*) AS n FROM ${tables(ns).changes}`))[0]!.n;
    const logged = await changes();
    await store.setTags('d', { user: 'dee' });
    await store.setTags('a', {});
    expect(await changes()).toBe(logged);
    expect(await indexDrift(ns)).toEqual([]);

    await store.delete('b');
    await new Promise((resolve) => setTimeout(resolve, 5));
    await store.sweep({ idleFor: 0 });
    expect(await store.info('a')).toBeNull();
    expect(await query(`SELECT * FROM ${tables(ns).tags}`)).toEqual([]);
    await dropAndClose(backend);
  });

  it('reads a filtered page by walking the tag index in the catalog order, with no sort', async () => {
    const backend = await freshBackend();
    const t = tables(backend.namespace);
    // Enough sessions that the optimizer weighs its choices: every one tagged, 1% with user ann,
    // their times shuffled.
    const rows = Array.from({ length: 5000 }, (_, i) => [
      `s${String(i).padStart(5, '0')}`,
      (i * 7919) % 10007,
      JSON.stringify({
        agent: 'triage',
        ...(i % 1000 === 3 ? { rare: 'yes' } : {}),
        user: i % 100 === 7 ? 'ann' : `u${i % 97}`,
      }),
    ]);
    await adminPool().query(
      `INSERT INTO ${t.sessions} (id, updated_at, tags, head, last_seq, checkpoints, metadata, created_at)
       SELECT j.id, j.updated_at, j.tags, 1, 1, 1, '{}', 1
         FROM JSON_TABLE(?, '$[*]' COLUMNS (id VARCHAR(10) PATH '$[0]', updated_at BIGINT PATH '$[1]',
                                            tags TEXT PATH '$[2]')) AS j`,
      [JSON.stringify(rows)],
    );
    await adminPool().query(`ANALYZE TABLE ${t.sessions}, ${t.tags}`);
    const taggedSessions = backendStatements(backend.namespace).reads.taggedSessions!;
    const where: [string, string][] = [['user', 'ann']];
    // The first pair of every session, the second of a few: the plan that starts from the
    // second and sorts what it finds looks cheaper to the optimizer, and is not taken.
    const both: [string, string][] = [
      ['agent', 'triage'],
      ['rare', 'yes'],
    ];
    for (const [pairs, after] of [
      [where, null],
      [where, { updatedAt: 5000, sessionId: 's02500' }],
      [both, null],
      [both, { updatedAt: 5000, sessionId: 's02500' }],
    ] as const) {
      const statement = taggedSessions({ pairs: pairs.length, prefix: false, after: !!after });
      const values = statement.args({ where: [...pairs], prefix: '', bound: '', after, limit: 51 });
      const steps = await plan(statement.sql.sql, positionalValues(statement.sql.order, values));
      expect(steps[0]).toMatchObject({ table: 'w', key: 'by_tag' });
      for (const step of steps) expect(step.Extra ?? '').not.toMatch(/filesort|temporary/i);
    }
    const store = new CheckpointStore(backend);
    const page = await store.sessions({ where: { user: 'ann' }, limit: 20 });
    const newestFirst = rows
      .filter(([, , tags]) => JSON.parse(tags as string).user === 'ann')
      .sort(([a, at], [b, bt]) => (bt as number) - (at as number) || (a! < b! ? 1 : -1));
    expect(page.items.map((s) => s.sessionId)).toEqual(newestFirst.slice(0, 20).map(([id]) => id));
    await dropAndClose(backend);
  });

  it('upgrades a namespace of schema 10: its sessions untagged, tagged and found after, also as a process of version 10 goes on writing', async () => {
    const ns = namespaceToDrop();
    const admin = adminPool();
    await writeOldTables(admin, ns, 10);
    for (const statement of versionTenProcedures(ns)) await admin.query(statement);
    const append = (id: string, at: number) =>
      admin.query(`CALL ${ns}_append(?, ?, '{}', '[]', false, NULL, NULL, ?, '[]')`, [
        id,
        String(at),
        at,
      ]);
    await append('old-a', 1000);
    await append('old-b', 2000);
    await append('old-c', 3000);

    const backend: MysqlBackend = mysql({ url, namespace: ns });
    const store = new CheckpointStore(backend);
    await backend.ready();
    expect(await query(`SELECT value FROM ${ns}_meta WHERE k = 'schema_version'`)).toEqual([
      { value: String(SCHEMA_VERSION) },
    ]);
    expect((await store.info('old-a'))?.tags).toEqual({});
    const listed = (await store.sessions()).items;
    expect(listed.map((s) => [s.sessionId, s.tags])).toEqual([
      ['old-c', {}],
      ['old-b', {}],
      ['old-a', {}],
    ]);
    expect((await store.sessions({ where: { user: 'ann' } })).items).toEqual([]);

    await store.setTags('old-a', { user: 'ann' });
    await store.checkpoint('old-b', 'tagged', { tags: { user: 'ann' } });
    const found = async () =>
      (await store.sessions({ where: { user: 'ann' } })).items.map((s) => s.sessionId);
    expect(await found()).toEqual(['old-b', 'old-a']);
    // A process of version 10, not yet upgraded, calls append as it knew it: its checkpoint
    // leaves the tags, and moves the session in the index as in the catalog.
    await append('old-a', Date.now() + 60_000);
    expect((await store.load('old-a'))?.seq).toBe(2);
    expect((await store.info('old-a'))?.tags).toEqual({ user: 'ann' });
    expect(await found()).toEqual(['old-a', 'old-b']);
    expect(await indexDrift(ns)).toEqual([]);
    await store.close();
  });
});
