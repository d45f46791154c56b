/** What is PostgreSQL's alone: round trips, many connections, schema versions, secrets. */

import {
  countCalls,
  expectBadConnectionOptionsRefused,
  expectDistinctSeqsFromManyWriters,
  expectOldSessionsReadWhole,
  expectOneStatementPerOperation,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore, compress, isCkptError, openStore } from '@ckpt/core';
import { type PostgresBackend, postgres, postgresKv, SCHEMA_VERSION } from '@ckpt/postgres';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { migrations, schemaIdentifier } from '../src/schema.js';
import { writeOldSchema } from './old-schemas.js';
import { available, dropAndClose, freshBackend, freshNamespace, url } from './support.js';

// Pools the tests open themselves; a backend never ends a pool it was given.
const opened: pg.Pool[] = [];
afterAll(async () => {
  for (const pool of opened) await pool.end();
});

describe.skipIf(!available)('postgres', () => {
  /** ckpt's statements prepared on the connection of the one-connection `pool`, by name. */
  async function preparedOn(
    pool: pg.Pool,
  ): Promise<Map<string, { statement: string; runs: number }>> {
    const { rows } = await pool.query(
      `SELECT name, statement, generic_plans + custom_plans AS runs
         FROM pg_prepared_statements WHERE name LIKE 'ckpt\\_%'`,
    );
    return new Map(rows.map((r) => [r.name, { statement: r.statement, runs: Number(r.runs) }]));
  }

  /** A store on a fresh namespace and a pool of one connection, counting the statements sent. */
  async function countedStore() {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    opened.push(pool);
    const backend = postgres({ pool, namespace: freshNamespace() });
    await backend.ready();
    const store = new CheckpointStore(backend);
    return { pool, backend, store, counter: countCalls(pool, 'query') };
  }

  it('sends one statement per operation, mutations included, preparing each once per connection', async () => {
    const { pool, backend, store, counter } = await countedStore();
    await expectOneStatementPerOperation(store, counter);
    await store.delete('s');
    const warm = await preparedOn(pool);
    const texts = [...warm.values()].map((p) => p.statement).join('\n');
    for (const called of [
      '.append(',
      'WITH moved AS',
      '.rollback(',
      '.fork(',
      '.lineage(',
      's.head AS seq',
    ]) {
      expect(texts).toContain(called);
    }
    // The pool's one connection has prepared them all: a second round prepares nothing more,
    // and runs each of them again.
    await expectOneStatementPerOperation(store, counter);
    const again = await preparedOn(pool);
    expect([...again.keys()].sort()).toEqual([...warm.keys()].sort());
    for (const [name, { runs }] of warm) expect(again.get(name)!.runs).toBeGreaterThan(runs);
    await dropAndClose(backend);
  });

  /** Resolves once the server process `pid` waits for a lock. */
  async function waitForLock(pid: number): Promise<void> {
    const watcher = new pg.Client({ connectionString: url });
    await watcher.connect();
    try {
      for (let tries = 0; tries < 500; tries++) {
        const { rows } = await watcher.query(
          `SELECT count(*)::int AS waiting FROM pg_stat_activity
            WHERE pid = $1 AND wait_event_type = 'Lock'`,
          [pid],
        );
        if (rows[0].waiting > 0) return;
        await new Promise((resolve) => setTimeout(resolve, 10));
      }
      throw new Error(`server process ${pid} never waited for a lock`);
    } finally {
      await watcher.end();
    }
  }

  it('sends one statement for a checkpoint with needs, and records them', async () => {
    const { backend, store, counter } = await countedStore();
    await store.checkpoint('s', 1);
    counter.reset();
    await store.checkpoint('s', 2, { needs: [1] });
    expect(counter.count).toBe(1);
    expect(await store.prune('s', { keepLast: 1 })).toBe(0);
    await dropAndClose(backend);
  });

  it('sends two statements for a checkpoint that cannot go straight through, and never more', async () => {
    const { pool, backend, store, counter } = await countedStore();
    await store.checkpoint('s', 1);
    counter.reset();
    await store.checkpoint('fresh', 1, { expectedHead: null, transcript: ['a'] });
    expect(counter.count, 'statements sent for a first checkpoint with expectedHead null').toBe(1);
    const conflicts: [string, () => Promise<unknown>][] = [
      ['a stale expectedHead', () => store.checkpoint('s', 2, { expectedHead: 7 })],
      [
        'expectedHead null on a session that exists',
        () => store.checkpoint('s', 2, { expectedHead: null }),
      ],
      [
        'expectedHead on a session that does not exist',
        () => store.checkpoint('new', 1, { expectedHead: 1 }),
      ],
    ];
    for (const [what, op] of conflicts) {
      counter.reset();
      await expect(op(), what).rejects.toMatchObject({ code: 'CONFLICT' });
      expect(counter.count, `statements sent for ${what}`).toBe(2);
    }
    expect(await store.history('s')).toEqual([1]);

    // Another connection is creating session 'race' and has not committed: the checkpoint's
    // statement waits for it, finds the session made, writes nothing, and `append` adds seq 2.
    const { rows } = await pool.query('SELECT pg_backend_pid() AS pid');
    const other = new pg.Client({ connectionString: url });
    await other.connect();
    const ns = schemaIdentifier(backend.namespace);
    await other.query('BEGIN');
    await other.query(
      `SELECT * FROM ${ns}.append('race', '1', '{}', '[]', false, NULL, NULL, 1, '[]')`,
    );
    counter.reset();
    const racing = store.checkpoint('race', 2);
    await waitForLock(rows[0].pid);
    await other.query('COMMIT');
    await other.end();
    expect(await racing).toMatchObject({ seq: 2, parent: 1 });
    expect(counter.count).toBe(2);
    expect(await store.history('race')).toEqual([1, 2]);
    await dropAndClose(backend);
  });

  it('goes on with unnamed statements once a connection has lost what was prepared on it', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    opened.push(pool);
    const backend = postgres({ pool, namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', { step: 1 });
    expect((await store.load('s'))?.data).toEqual({ step: 1 });
    expect((await preparedOn(pool)).size).toBeGreaterThan(0);
    // What a pooler that resets connections, or hands statements to any of them, does.
    await pool.query('DEALLOCATE ALL');
    expect((await store.load('s'))?.data).toEqual({ step: 1 });
    await store.checkpoint('s', { step: 2 });
    expect((await store.load('s'))?.data).toEqual({ step: 2 });
    expect((await store.info('s'))?.checkpoints).toBe(2);
    expect((await preparedOn(pool)).size).toBe(0);
    await dropAndClose(backend);
  });

  it('prepares nothing with preparedStatements: false, for a proxy that pins prepared connections', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    opened.push(pool);
    const namespace = freshNamespace();
    const backend = postgres({ pool, namespace, preparedStatements: false });
    const kv = postgresKv({ pool, namespace, preparedStatements: false });
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', { step: 1 });
    expect((await store.load('s'))?.data).toEqual({ step: 1 });
    await kv.set('k', 'v');
    expect(await kv.get('k')).toBe('v');
    expect((await preparedOn(pool)).size).toBe(0);
    await dropAndClose(backend);
  });

  it('gives 16 connections x 100 checkpoints on one session 1,600 distinct seqs', async () => {
    const first = await freshBackend();
    const others = Array.from({ length: 15 }, () => postgres({ url, namespace: first.namespace }));
    await expectDistinctSeqsFromManyWriters([first, ...others], 100);
    for (const b of others) await b.close();
    await dropAndClose(first);
  }, 120_000);

  /** Pools on `namespace` whose connections run at `isolation` by default. */
  function poolsAt(isolation: string, count: number): pg.Pool[] {
    const options = `-c default_transaction_isolation=${isolation.replace(' ', '\\ ')}`;
    return Array.from({ length: count }, () => {
      const pool = new pg.Pool({ connectionString: url, options, max: 1 });
      opened.push(pool);
      return pool;
    });
  }

  it.each(['serializable', 'repeatable read'])(
    'gives 16 writers distinct seqs when the pool runs at %s, running at READ COMMITTED what the server rolled back, and from then on',
    async (isolation) => {
      const namespace = freshNamespace();
      const pools = poolsAt(isolation, 16);
      // Checkpoints sent at the pool's own level; once one is rolled back, a writer sends the
      // rest at READ COMMITTED, so that few of its 100 are.
      const atPoolLevel = pools.map((pool) =>
        countCalls(pool, 'query', (query) => {
          const text = String((query as { text?: string }).text);
          return text.includes('WITH moved') && !text.startsWith('SET TRANSACTION');
        }),
      );
      const writers = pools.map((pool) => postgres({ pool, namespace }));
      const [{ rows }] = await Promise.all([
        writers[0]!.pool.query('SHOW default_transaction_isolation'),
        writers[0]!.ready(),
      ]);
      expect(rows[0].default_transaction_isolation).toBe(isolation);
      await expectDistinctSeqsFromManyWriters(writers, 100);
      expect(atPoolLevel.reduce((sum, counter) => sum + counter.count, 0)).toBeLessThan(400);
      await writers[0]!.pool.query(`DROP SCHEMA ${namespace} CASCADE`);
    },
    120_000,
  );

  it('runs a call at READ COMMITTED with its values intact, quotes, backslashes and compressed bytes included', async () => {
    const namespace = freshNamespace();
    const pools = poolsAt('serializable', 8);
    const reruns = pools.map((pool) =>
      countCalls(pool, 'query', (query) =>
        String((query as { text?: string }).text).startsWith('SET TRANSACTION'),
      ),
    );
    // Data compressed, so that bytes of every value (quotes, backslashes, zeros) go to bytea.
    const codecs = [compress('gzip', { minBytes: 1 })];
    const stores = pools.map(
      (pool) => new CheckpointStore(postgres({ pool, namespace }), { codecs }),
    );
    const id = `it's a \\ session $1 \u{1F600}`;
    const odd = (w: number, i: number) => ({
      text: `'quoted' \\ "double" \\' $2 E'x' ${w}/${i} \u00e9\u{1F600}\n`.repeat(8),
      n: -0.5,
    });
    const written = await Promise.all(
      stores.map(async (store, w) => {
        const saved = [];
        for (let i = 0; i < 30; i++) {
          saved.push(
            await store.checkpoint(id, odd(w, i), {
              metadata: { "k'ey": "v'\\" },
              transcript: [`said '${i}'`],
              idempotencyKey: `key '${w}' \\ ${i}`,
            }),
          );
        }
        return saved;
      }),
    );
    // Eight writers on one session at SERIALIZABLE collide: some calls ran again.
    expect(reruns.reduce((sum, counter) => sum + counter.count, 0)).toBeGreaterThan(0);
    const store = stores[0]!;
    for (const checkpoint of written.flat()) {
      expect(await store.load(id, checkpoint.seq)).toEqual(checkpoint);
    }
    expect((await store.info(id))?.checkpoints).toBe(240);
    await pools[0]!.query(`DROP SCHEMA ${namespace} CASCADE`);
  }, 60_000);

  it('migrates a new namespace once when several stores open it at the same moment', async () => {
    const namespace = freshNamespace();
    const backends = Array.from({ length: 8 }, () => postgres({ url, namespace }));
    await Promise.all(backends.map((b) => b.ready()));
    const { rows } = await backends[0]!.pool.query(
      `SELECT value FROM ${namespace}.meta WHERE key = 'schema_version'`,
    );
    expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
    for (const b of backends.slice(1)) await b.close();
    await dropAndClose(backends[0]!);
  });

  it('works in a schema whose name PostgreSQL reserves, such as user or order', async () => {
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    opened.push(admin);
    for (const namespace of ['user', 'order']) {
      await admin.query(`DROP SCHEMA IF EXISTS "${namespace}" CASCADE`);
      const store = new CheckpointStore(postgres({ url, namespace }));
      await store.checkpoint('s', { step: 1 }, { transcript: ['hi'] });
      await store.checkpoint('s', { step: 2 });
      await store.rollback('s', 1);
      const fork = await store.fork('s');
      expect(await store.history(fork)).toEqual([1]);
      expect((await store.transcript('s')).items.map((e) => e.item)).toEqual(['hi']);
      expect((await store.list('s')).items.map((c) => c.seq)).toEqual([2, 1]);
      expect((await store.sessions()).items).toHaveLength(2);
      expect(await store.prune('s', { keepLast: 1 })).toBe(0);
      await store.state('scope').set('k', 'v');
      expect(await store.state('scope').keys()).toEqual({ items: ['k'], cursor: null });
      expect(await store.delete(fork)).toBe(true);
      expect((await store.load('s'))?.data).toEqual({ step: 1 });
      await store.close();
      const kv = postgresKv({ url, namespace });
      await kv.set('key', 'value');
      expect(await kv.get('key')).toBe('value');
      await kv.close?.();
      await admin.query(`DROP SCHEMA "${namespace}" CASCADE`);
    }
  });

  /** A fresh namespace at schema `version`, as that version's migrations left it. */
  async function oldSchema(version: number) {
    const namespace = freshNamespace();
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    opened.push(admin);
    await writeOldSchema(admin, namespace, version);
    return { namespace, admin };
  }

  it('upgrades a version 1 schema in place, keeping its sessions', async () => {
    expect(migrations('x')).toHaveLength(SCHEMA_VERSION);
    const { namespace, admin } = await oldSchema(1);
    const big = 'agent state '.repeat(2000);
    await admin.query(
      `SELECT * FROM ${namespace}.append('old', $1, '{}', '[]', false, NULL, NULL, 1)`,
      [JSON.stringify(big)],
    );

    const backend = postgres({ url, namespace });
    const store = new CheckpointStore(backend);
    expect((await store.load('old'))?.data).toBe(big);
    await store.checkpoint('old', big);
    const { rows } = await admin.query(`SELECT value FROM ${namespace}.meta`);
    expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);

    // Where the server has lz4, payloads use it: those written from now on, and the old row,
    // which the change of the column to bytes rewrote.
    const lz4 = await admin
      .query('CREATE TEMP TABLE lz4_probe (x text COMPRESSION lz4)')
      .then(() => true)
      .catch((err: { code?: string }) => {
        if (err.code === '0A000' || err.code === '42601') return false;
        throw err;
      });
    const stored = await admin.query(
      `SELECT seq, pg_column_compression(data) AS method FROM ${namespace}.bodies ORDER BY seq`,
    );
    expect(stored.rows).toEqual([
      { seq: '1', method: lz4 ? 'lz4' : 'pglz' },
      { seq: '2', method: lz4 ? 'lz4' : 'pglz' },
    ]);
    await dropAndClose(backend);
  });

  it.each([1, 2, 3, 4, 6, 8])(
    'upgrades a version %i schema in place, its sessions read back whole',
    async (version) => {
      const { namespace, admin } = await oldSchema(version);
      const call = (sql: string, values: unknown[]) =>
        admin.query(`SELECT * FROM ${namespace}.${sql}`, values);
      // Version 6 appends with needs, as a ninth argument; version 8 takes data as bytes, which
      // the server makes of the text sent as it makes them of any text.
      const needs = version < 6 ? '' : ", '[]'";
      const store = await expectOldSessionsReadWhole(
        {
          append: (at) =>
            call(`append('old', $1, $2, '[]', false, NULL, NULL, $3${needs})`, [
              String(at),
              JSON.stringify({ at }),
              at,
            ]),
          rollback: (seq, at) => call(`rollback('old', $1, false, NULL, $2)`, [seq, at]),
          fork: (seq, at) => call(`fork('old', $1, 'fork', $2)`, [seq, at]),
        },
        // Opened only after the old schema has written: opening starts the upgrade.
        () => new CheckpointStore(postgres({ url, namespace })),
      );
      await dropAndClose(store.backend as PostgresBackend);
    },
  );

  it('keeps the head parent of the session row true through checkpoint, rollback and fork', async () => {
    const backend = await freshBackend();
    const store = new CheckpointStore(backend);
    const headParent = async (id: string) =>
      (
        await backend.pool.query(
          `SELECT head_parent FROM "${backend.namespace}".sessions WHERE id = $1`,
          [id],
        )
      ).rows[0].head_parent;
    await store.checkpoint('s', 1);
    expect(await headParent('s')).toBeNull();
    await store.checkpoint('s', 2);
    await store.checkpoint('s', 3);
    expect(await headParent('s')).toBe('2');
    await store.rollback('s', 2);
    expect(await headParent('s')).toBe('1');
    await store.fork('s', { atSeq: 3, newId: 'f' });
    expect(await headParent('f')).toBe('2');
    await dropAndClose(backend);
  });

  it('reads a long session by key, not whole, once the plans cached are generic and the tables analyzed', async () => {
    // Each session but one has a checkpoint, as in a catalog of short sessions: statistics then
    // say a session has one row of each table, and a generic plan that finds a body by session
    // alone looks cheap. On the long session such a plan reads all 400.
    const namespace = freshNamespace();
    const filler = new pg.Pool({
      connectionString: url,
      max: 8,
      options: '-c synchronous_commit=off',
    });
    const filled = new CheckpointStore(postgres({ pool: filler, namespace }));
    let next = 0;
    await Promise.all(
      Array.from({ length: 8 }, async () => {
        for (let i = next++; i < 1500; i = next++) await filled.checkpoint(`short-${i}`, { i });
      }),
    );
    for (let i = 0; i < 400; i++)
      await filled.checkpoint('long', { i }, { transcript: [`user ${i}`, `agent ${i}`] });
    await filler.query(`ANALYZE ${schemaIdentifier(namespace)}.sessions, ${schemaIdentifier(namespace)}.checkpoints,
                         ${schemaIdentifier(namespace)}.bodies, ${schemaIdentifier(namespace)}.transcripts`);
    // A connection sends its table counters to the shared view only now and then (at most once
    // a second, else when idle for a while), so the fill's reads (400 of the long session's
    // row) could land inside a measurement below: each of its connections sends them now.
    const fillers = await Promise.all(
      Array.from({ length: filler.totalCount }, () => filler.connect()),
    );
    for (const client of fillers) await client.query('SELECT pg_stat_force_next_flush()');
    for (const client of fillers) client.release();
    await filler.end();
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    opened.push(admin);

    const pool = new pg.Pool({
      connectionString: url,
      max: 1,
      options: '-c plan_cache_mode=force_generic_plan',
    });
    opened.push(pool);
    const store = new CheckpointStore(postgres({ pool, namespace }));
    /** Rows the server read from the namespace's tables while `op` ran (second run: prepared). */
    const rowsRead = async (op: () => Promise<unknown>) => {
      const read = async () => {
        // The counters of the pool's one connection reach the shared view when it goes idle.
        await pool.query('SELECT pg_stat_force_next_flush()');
        const { rows } = await admin.query(
          `SELECT sum(seq_tup_read + coalesce(idx_tup_fetch, 0))::int AS n FROM pg_stat_user_tables
            WHERE schemaname = $1`,
          [namespace],
        );
        return rows[0].n as number;
      };
      await op();
      const before = await read();
      await op();
      return (await read()) - before;
    };
    // A row or two for one checkpoint; a page reads its rows and a step past them (a transcript
    // page a checkpoint and its items a step). A scan of the long session reads 400 or more.
    const onePerCall = 5;
    const pageOfTen = 25;
    expect(await rowsRead(() => store.load('long'))).toBeLessThanOrEqual(onePerCall);
    expect(await rowsRead(() => store.load('long', 7))).toBeLessThanOrEqual(onePerCall);
    expect(await rowsRead(() => store.info('long'))).toBeLessThanOrEqual(onePerCall);
    expect(await rowsRead(() => store.checkpoint('long', { more: true }))).toBeLessThanOrEqual(
      onePerCall,
    );
    expect(await rowsRead(() => store.rollback('long', 7))).toBeLessThanOrEqual(onePerCall);
    expect(await rowsRead(() => store.list('long', { limit: 10 }))).toBeLessThanOrEqual(pageOfTen);
    expect(await rowsRead(() => store.transcript('long', { limit: 10 }))).toBeLessThanOrEqual(
      pageOfTen,
    );
    expect(await rowsRead(() => store.sessions({ limit: 10 }))).toBeLessThanOrEqual(pageOfTen);
    await dropAndClose(store.backend as PostgresBackend);
  });

  it('refuses a newer schema with SCHEMA, saying to upgrade', async () => {
    const backend = await freshBackend();
    const newer = SCHEMA_VERSION + 1;
    await backend.pool.query(`UPDATE ${backend.namespace}.meta SET value = '${newer}'`);
    const again = postgres({ url, namespace: backend.namespace });
    const err = await new CheckpointStore(again).load('s').catch((e: unknown) => e);
    expect(isCkptError(err, 'SCHEMA')).toBe(true);
    expect((err as Error).message).toMatch(new RegExp(`version ${newer}.*upgrade @ckpt/postgres`));
    await again.close();
    await dropAndClose(backend);
  });

  it('refuses a schema holding tables that ckpt did not create', async () => {
    const namespace = freshNamespace();
    const admin = new pg.Pool({ connectionString: url });
    opened.push(admin);
    await admin.query(`CREATE SCHEMA ${namespace}; CREATE TABLE ${namespace}.sessions (x int)`);
    const backend = postgres({ url, namespace });
    const err = await backend.ready().catch((e: unknown) => e);
    expect(isCkptError(err, 'SCHEMA')).toBe(true);
    await backend.close();
    await admin.query(`DROP SCHEMA ${namespace} CASCADE`);
  });

  it('never closes a pool it was given', async () => {
    const pool = new pg.Pool({ connectionString: url });
    opened.push(pool);
    const backend = postgres({ pool, namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', 1);
    await store.close();
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.query(`DROP SCHEMA ${backend.namespace} CASCADE`);
  });

  it('works in a schema an administrator made for a user who may not create schemas, and says what such a user lacks', async () => {
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    opened.push(admin);
    const role = `ckpt_app_${process.pid}`;
    const [ready, refused] = [freshNamespace(), freshNamespace()];
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'app'`);
    const { rows } = await admin.query(
      `SELECT has_database_privilege($1, current_database(), 'CREATE') AS may`,
      [role],
    );
    expect(rows[0].may, 'a new role may not create schemas here').toBe(false);
    await admin.query(`CREATE SCHEMA ${ready} AUTHORIZATION ${role}`);
    const asApp = new URL(url);
    asApp.username = role;
    asApp.password = 'app';
    try {
      const store = new CheckpointStore(postgres({ url: asApp.toString(), namespace: ready }));
      await store.checkpoint('s', { step: 1 });
      await store.fork('s', { newId: 'f' });
      expect((await store.load('f'))?.data).toEqual({ step: 1 });
      await store.close();

      const denied = new CheckpointStore(postgres({ url: asApp.toString(), namespace: refused }));
      const err = await denied.load('s').catch((e: unknown) => e);
      await denied.close();
      expect(isCkptError(err, 'BACKEND')).toBe(true);
      expect((err as Error).message).toMatch(
        /permission denied for database .*; the user lacks a privilege the store needs/,
      );
    } finally {
      await admin.query(`DROP SCHEMA IF EXISTS ${ready} CASCADE`);
      await admin.query(`DROP SCHEMA IF EXISTS ${refused} CASCADE`);
      await admin.query(`DROP ROLE ${role}`);
    }
  });

  it('lets a role that may only read open a migrated schema and read it all; its writes fail, saying what it lacks, and write nothing', async () => {
    const admin = new pg.Pool({ connectionString: url, max: 1 });
    opened.push(admin);
    const role = `ckpt_reader_${process.pid}`;
    const writer = await freshBackend();
    const namespace = writer.namespace;
    const written = new CheckpointStore(writer);
    await written.checkpoint('s', { step: 1 }, { transcript: ['one'] });
    await written.checkpoint('s', { step: 2 }, { transcript: ['two'] });
    await written.state('scope').set('k', 'v');
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'reader'`);
    await admin.query(`GRANT USAGE ON SCHEMA ${schemaIdentifier(namespace)} TO ${role}`);
    await admin.query(
      `GRANT SELECT ON ALL TABLES IN SCHEMA ${schemaIdentifier(namespace)} TO ${role}`,
    );
    const asReader = new URL(url);
    asReader.username = role;
    asReader.password = 'reader';
    const reader = new CheckpointStore(postgres({ url: asReader.toString(), namespace }));
    try {
      expect((await reader.load('s'))?.data).toEqual({ step: 2 });
      expect((await reader.load('s', 1))?.data).toEqual({ step: 1 });
      expect((await reader.info('s'))?.checkpoints).toBe(2);
      expect(await reader.history('s')).toEqual([1, 2]);
      expect((await reader.list('s')).items.map((c) => c.seq)).toEqual([2, 1]);
      expect((await reader.transcript('s')).items.map((e) => e.item)).toEqual(['two', 'one']);
      expect((await reader.sessions()).items.map((i) => i.sessionId)).toEqual(['s']);
      expect(await reader.state('scope').get('k')).toBe('v');
      expect((await reader.state('scope').keys()).items).toEqual(['k']);

      const err = await reader.checkpoint('s', { step: 3 }).catch((e: unknown) => e);
      expect(isCkptError(err, 'BACKEND')).toBe(true);
      expect((err as Error).message).toMatch(/permission denied .*; the user lacks a privilege/);
      expect(await written.head('s')).toBe(2);
      expect((await written.info('s'))?.checkpoints).toBe(2);
    } finally {
      await reader.close();
      await dropAndClose(writer);
      await admin.query(`DROP ROLE ${role}`);
    }
  });

  it('says to create the database when the URL names one the server does not have', async () => {
    const missing = new URL(url);
    missing.pathname = `/ckpt_missing_${process.pid}`;
    const store = new CheckpointStore(
      postgres({ url: missing.toString(), namespace: freshNamespace() }),
    );
    const err = await store.load('s').catch((e: unknown) => e);
    expect(isCkptError(err, 'BACKEND')).toBe(true);
    expect((err as Error).message).toMatch(
      /does not exist; the database named in the URL does not exist: create it/,
    );
    await store.close();
  });

  it('reports a failing server as BACKEND with the driver error as cause and no password', async () => {
    const secret = 'hunter2-very-secret';
    const store = new CheckpointStore(
      postgres({
        url: `postgres://nobody:${secret}@127.0.0.1:1/test`,
        namespace: freshNamespace(),
      }),
    );
    const err = await store.load('s').catch((e: unknown) => e);
    expect(isCkptError(err, 'BACKEND')).toBe(true);
    expect((err as Error).message).toMatch(/ECONNREFUSED.*check that the server is running/);
    expect((err as Error).cause).toBeInstanceOf(Error);
    const everything =
      JSON.stringify(err, Object.getOwnPropertyNames(err)) + String((err as Error).stack);
    expect(everything).not.toContain(secret);
    expect(
      JSON.stringify((err as Error).cause, Object.getOwnPropertyNames((err as Error).cause)),
    ).not.toContain(secret);
    await store.close();
  });

  it("opens 'postgres://…?namespace=' with openStore", async () => {
    const namespace = freshNamespace();
    const store = await openStore(`${url}?namespace=${namespace}`);
    await store.checkpoint('s', 'hello');
    expect((await store.load('s'))?.data).toBe('hello');
    await dropAndClose(store.backend as never);
  });
});

// No server needed: every one of these is refused before a connection is made.
describe('postgres options', () => {
  it.each(['pg_agents', 'pg_catalog', 'information_schema'])(
    'refuses namespace %s, a schema PostgreSQL keeps for itself',
    (namespace) => {
      for (const open of [postgres, postgresKv]) {
        let err: unknown;
        try {
          open({ url: 'postgres://127.0.0.1:1/x', namespace });
        } catch (e) {
          err = e;
        }
        expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
        expect((err as Error).message).toMatch(/keeps for itself.*pick another/);
      }
    },
  );

  it.each([
    ['postgres', postgres],
    ['postgresKv', postgresKv],
  ])('%s() refuses bad options with INVALID_ARGUMENT, never showing a password', (_, factory) =>
    expectBadConnectionOptionsRefused(factory, {
      scheme: 'postgres',
      handle: 'pool',
      switches: ['preparedStatements', 'groupCommit'],
    }),
  );
});
