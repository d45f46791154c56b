/** What is MySQL's alone: round trips, many connections, exact ids, schema versions, secrets. */

import { expectCkptError } from '@ckpt/contract-tests';
import {
  countCalls,
  expectBadConnectionOptionsRefused,
  expectDistinctSeqsFromManyWriters,
  expectOldSessionsReadWhole,
  expectOneStatementPerOperation,
  firstEvents,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore, isCkptError, kvBackend, openStore } from '@ckpt/core';
import { type MysqlBackend, mysql, mysqlKv, SCHEMA_VERSION } from '@ckpt/mysql';
import mysql2, { type Pool } from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { migrations } from '../src/schema.js';
import { writeOldSchema } from './old-schemas.js';
import {
  available,
  dropAndClose,
  dropNamespace,
  freshBackend,
  freshNamespace,
  url,
} from './support.js';

// Pools the tests open themselves; a backend never ends a pool it was given.
const opened: Pool[] = [];
afterAll(async () => {
  for (const pool of opened) await pool.end();
});

describe.skipIf(!available)('mysql', () => {
  it('sends one statement per operation, mutations included, each prepared once per connection', async () => {
    const pool = mysql2.createPool({ uri: url, connectionLimit: 1 });
    opened.push(pool);
    const backend = mysql({ pool, namespace: freshNamespace() });
    await backend.ready();
    const store = new CheckpointStore(backend);
    const counter = countCalls(pool.pool, ['query', 'execute']);
    const prepared = async () => {
      const [rows] = await pool.query("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'");
      return Number((rows as { Value: string }[])[0]!.Value);
    };
    const fresh = await prepared();
    await expectOneStatementPerOperation(store, counter);
    await store.delete('s');
    const warm = await prepared();
    expect(warm).toBeGreaterThan(fresh);
    // The pool's one connection has now prepared every statement: it prepares none again.
    await expectOneStatementPerOperation(store, counter);
    expect(await prepared()).toBe(warm);
    await dropAndClose(backend);
  });

  it('gives 16 connections x 100 checkpoints on one session 1,600 distinct seqs, no deadlock reaching the caller', async () => {
    const first = await freshBackend();
    const others = Array.from({ length: 15 }, () => mysql({ url, namespace: first.namespace }));
    await expectDistinctSeqsFromManyWriters([first, ...others], 100);
    for (const b of others) await b.close();
    await dropAndClose(first);
  }, 120_000);

  it('creates many new sessions concurrently without deadlocks', async () => {
    const first = await freshBackend();
    const backends = [
      first,
      ...Array.from({ length: 7 }, () => mysql({ url, namespace: first.namespace })),
    ];
    await Promise.all(
      backends.map(async (backend) => {
        const store = new CheckpointStore(backend);
        for (let i = 0; i < 40; i++) await store.checkpoint(`new-${i}`, i);
      }),
    );
    const store = new CheckpointStore(first);
    for (let i = 0; i < 40; i++) expect((await store.info(`new-${i}`))?.checkpoints).toBe(8);
    for (const b of backends.slice(1)) await b.close();
    await dropAndClose(first);
  }, 120_000);

  it('migrates a new namespace once when several stores open it at the same moment', async () => {
    const namespace = freshNamespace();
    const backends = Array.from({ length: 6 }, () => mysql({ url, namespace }));
    await Promise.all(backends.map((b) => b.ready()));
    const [rows] = await backends[0]!.pool.query(`SELECT value FROM ${namespace}_meta`);
    expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
    for (const b of backends) await b.close();
    await dropNamespace(namespace);
  });

  /** A fresh namespace at schema `version`, as that version's migrations left it. */
  async function oldSchema(version: number) {
    const namespace = freshNamespace();
    const admin = mysql2.createPool({ uri: url, connectionLimit: 1 });
    opened.push(admin);
    await writeOldSchema(admin, namespace, version);
    return { namespace, admin };
  }

  it('upgrades a version 1 schema in place, keeping its sessions, and drops the procedure loads no longer call', async () => {
    expect(migrations('x')).toHaveLength(SCHEMA_VERSION);
    const { namespace, admin } = await oldSchema(1);
    await admin.query(
      `CREATE PROCEDURE ${namespace}_load(IN p_id VARBINARY(1020), IN p_seq BIGINT) SELECT p_id, p_seq`,
    );
    await admin.query(`CALL ${namespace}_append('old', '"kept"', '{}', '[]', 0, NULL, NULL, 1)`);
    const routines = async () => {
      const [rows] = (await admin.query(
        `SELECT routine_name AS name FROM information_schema.routines
          WHERE routine_schema = DATABASE() AND routine_name LIKE ? ORDER BY routine_name`,
        [`${namespace}\\_%`],
      )) as unknown as [{ name: string }[]];
      return rows.map((row) => row.name.slice(namespace.length + 1));
    };
    expect(await routines()).toContain('load');

    const backend = mysql({ url, namespace });
    const store = new CheckpointStore(backend);
    expect((await store.load('old'))?.data).toBe('kept');
    const [rows] = await admin.query(`SELECT value FROM ${namespace}_meta`);
    expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
    expect(await routines()).toEqual([
      'append',
      'append_batch',
      'append_tagged',
      'delete',
      'delete_idle',
      'delete_idle_batch',
      'fork',
      'pin',
      'prune',
      'rollback',
      'set_tags',
      'trim_changes',
      'unpin',
    ]);
    await store.checkpoint('old', 'next');
    expect((await store.load('old'))?.data).toBe('next');
    expect((await store.load('old', 1))?.data).toBe('kept');
    await dropAndClose(backend);
  });

  it.each([1, 2, 3, 4, 5])(
    'upgrades a version %i schema in place, its sessions read back whole',
    async (version) => {
      const { namespace, admin } = await oldSchema(version);
      const call = (sql: string, values: unknown[]) =>
        admin.query(`CALL ${namespace}_${sql}`, values);
      const store = await expectOldSessionsReadWhole(
        {
          append: (at) =>
            call("append('old', ?, ?, '[]', 0, NULL, NULL, ?)", [
              String(at),
              JSON.stringify({ at }),
              at,
            ]),
          rollback: (seq, at) => call("rollback('old', ?, 0, NULL, ?)", [seq, at]),
          fork: (seq, at) => call("fork('old', ?, 'fork', ?)", [seq, at]),
        },
        // Opened only after the old schema has written: opening starts the upgrade.
        () => new CheckpointStore(mysql({ url, namespace })),
      );
      await dropAndClose(store.backend as MysqlBackend);
    },
  );

  it('runs a call again while its procedure is missing, as for the instant an upgrade replaces it', async () => {
    const backend = await freshBackend();
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', 1);
    const procedure = `${backend.namespace}_append_tagged`;
    const [[shown]] = (await backend.pool.query(
      `SHOW CREATE PROCEDURE ${procedure}`,
    )) as unknown as [[{ 'Create Procedure': string }]];
    await backend.pool.query(`DROP PROCEDURE ${procedure}`);
    const writing = store.checkpoint('s', 2);
    await new Promise((resolve) => setTimeout(resolve, 50));
    await backend.pool.query(shown['Create Procedure']);
    expect((await writing).seq).toBe(2);

    // A procedure that stays missing fails the call, after about a second, with BACKEND.
    await backend.pool.query(`DROP PROCEDURE ${procedure}`);
    const err = await expectCkptError(store.checkpoint('s', 3), 'BACKEND');
    expect((err.cause as { code?: string }).code).toBe('ER_SP_DOES_NOT_EXIST');
    await backend.pool.query(shown['Create Procedure']);
    expect(await store.history('s')).toEqual([1, 2]);
    await dropAndClose(backend);
  });

  it('sends statements as text with preparedStatements: false, counting their escaping against the packet', async () => {
    const pool = mysql2.createPool({ uri: url, connectionLimit: 1 });
    opened.push(pool);
    const namespace = freshNamespace();
    const backend = mysql({ pool, namespace, preparedStatements: false });
    const kv = mysqlKv({ pool, namespace, preparedStatements: false });
    await backend.ready();
    const prepared = async () => {
      const [rows] = await pool.query("SHOW SESSION STATUS LIKE 'Com_stmt_prepare'");
      return Number((rows as { Value: string }[])[0]!.Value);
    };
    const before = await prepared();
    const store = new CheckpointStore(backend);
    await expectOneStatementPerOperation(store, countCalls(pool.pool, ['query', 'execute']));
    await kv.set('k', 'v');
    expect(await kv.get('k')).toBe('v');
    expect(await prepared()).toBe(before);
    // Quotes: their JSON text fits a packet, escaped once more into the SQL it does not.
    const [[{ bytes }]] = (await pool.query('SELECT @@max_allowed_packet AS bytes')) as unknown as [
      [{ bytes: number }],
    ];
    const large = new CheckpointStore(backend, { maxPayloadBytes: 4 * Number(bytes) });
    const quotes = '"'.repeat(Math.floor(0.4 * Number(bytes)));
    const err = await expectCkptError(large.checkpoint('q', quotes), 'PAYLOAD_TOO_LARGE');
    expect(err.message).toMatch(/max_allowed_packet/);
    expect(await large.info('q')).toBeNull();
    await dropAndClose(backend);
  }, 60_000);

  it("refuses a call larger than the server's max_allowed_packet, writing nothing, and goes on", async () => {
    const backend = await freshBackend();
    const [[{ bytes }]] = (await backend.pool.query(
      'SELECT @@max_allowed_packet AS bytes',
    )) as unknown as [[{ bytes: number }]];
    // The store allows more than the server carries: the call is refused before it is sent,
    // rather than by the server dropping the connection mid-write.
    const store = new CheckpointStore(backend, { maxPayloadBytes: 4 * Number(bytes) });
    const err = await expectCkptError(
      store.checkpoint('s', 'x'.repeat(Number(bytes) + 1)),
      'PAYLOAD_TOO_LARGE',
    );
    expect(err.message).toMatch(/max_allowed_packet/);
    await expectCkptError(
      store.state('big').set('k', 'x'.repeat(Number(bytes))),
      'PAYLOAD_TOO_LARGE',
    );
    expect(await store.info('s')).toBeNull();
    expect((await store.checkpoint('s', 'small')).seq).toBe(1);
    await dropAndClose(backend);
  }, 60_000);

  it('refuses a newer schema with SCHEMA, saying to upgrade', async () => {
    const backend = await freshBackend();
    const newer = SCHEMA_VERSION + 1;
    await backend.pool.query(`UPDATE ${backend.namespace}_meta SET value = ?`, [String(newer)]);
    const again = mysql({ url, namespace: backend.namespace });
    const err = await again.ready().catch((e: unknown) => e);
    expect(isCkptError(err, 'SCHEMA')).toBe(true);
    expect((err as Error).message).toMatch(new RegExp(`version ${newer}.*upgrade @ckpt/mysql`));
    await again.close();
    await dropAndClose(backend);
  });

  it('refuses tables of the same names that ckpt did not create', async () => {
    const namespace = freshNamespace();
    const pool = mysql2.createPool({ uri: url });
    opened.push(pool);
    await pool.query(`CREATE TABLE ${namespace}_sessions (x int)`);
    const backend = mysql({ url, namespace });
    expect(isCkptError(await backend.ready().catch((e: unknown) => e), 'SCHEMA')).toBe(true);
    await backend.close();
    await dropNamespace(namespace);
  });

  it('never closes a pool it was given, promise or callback style', async () => {
    const pool = mysql2.createPool({ uri: url });
    opened.push(pool);
    const backend = mysql({ pool, namespace: freshNamespace() });
    await new CheckpointStore(backend).checkpoint('s', 1);
    await backend.close();
    expect((await pool.query('SELECT 1 AS one'))[0]).toEqual([{ one: 1 }]);
    await dropNamespace(backend.namespace);
  });

  it.each([
    { rowsAsArray: true },
    { typeCast: false },
    { nestTables: true },
    // Every BIGINT (seqs, times, counts) then arrives as a string.
    { supportBigNumbers: true, bigNumberStrings: true },
    { dateStrings: true },
  ])('reads its rows right on a pool the caller configured with %j', async (poolOptions) => {
    const pool = mysql2.createPool({ uri: url, ...poolOptions });
    opened.push(pool);
    await expectEveryKindOfCallToWork(pool);
  });

  it('runs on an object that only wraps the promise methods of a pool', async () => {
    // Such as a wrapper that traces each query: it has no callback pool underneath.
    const pool = mysql2.createPool({ uri: url });
    opened.push(pool);
    const wrapper = {
      query: pool.query.bind(pool),
      execute: pool.execute.bind(pool),
      getConnection: pool.getConnection.bind(pool),
    } as unknown as Pool;
    expect((wrapper as Partial<Pool>).pool).toBeUndefined();
    await expectEveryKindOfCallToWork(wrapper);
  });

  /** Checkpoints, reads, listings and state, on a backend and on kvBackend, both on `pool`. */
  async function expectEveryKindOfCallToWork(pool: Pool): Promise<void> {
    const namespace = freshNamespace();
    for (const store of [
      new CheckpointStore(mysql({ pool, namespace })),
      new CheckpointStore(kvBackend(mysqlKv({ pool, namespace: `${namespace}_kv` }))),
    ]) {
      await store.checkpoint('s', { step: 1 }, { metadata: { m: 1 }, transcript: ['hi'] });
      await store.checkpoint('s', { step: 2 });
      const head = await store.load('s');
      expect(head).toMatchObject({ seq: 2, parent: 1, data: { step: 2 } });
      expect(Math.abs(head!.createdAt.getTime() - Date.now())).toBeLessThan(60_000);
      expect((await store.load('s', 1))?.metadata).toEqual({ m: 1 });
      expect(await store.history('s')).toEqual([1, 2]);
      const info = await store.info('s');
      expect(info).toMatchObject({ head: 2, checkpoints: 2 });
      expect(info!.updatedAt.getTime()).toBe(head!.createdAt.getTime());
      expect((await store.sessions()).items.map((i) => i.sessionId)).toEqual(['s']);
      await store.state('scope').set('k', 'v');
      expect(await store.state('scope').get('k')).toBe('v');
      await store.close();
    }
    await dropNamespace(namespace);
    await dropNamespace(`${namespace}_kv`);
  }

  it('refuses a pool whose character set cannot carry every character, writing nothing', async () => {
    const pool = mysql2.createPool({ uri: url, charset: 'latin1' });
    opened.push(pool);
    const namespace = freshNamespace();
    for (const store of [
      new CheckpointStore(mysql({ pool, namespace })),
      new CheckpointStore(kvBackend(mysqlKv({ pool, namespace }))),
    ]) {
      const err = await store.checkpoint('\u{1F99C}', 'hi').catch((e: unknown) => e);
      expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
      expect((err as Error).message).toMatch(/character set latin1.*charset: 'utf8mb4'/);
      await store.close();
    }
    const [found] = await pool.query('SHOW TABLES LIKE ?', [`${namespace}\\_%`]);
    expect(found).toEqual([]);
  });

  it('works for a user granted only the privileges its README lists, says what one lacking a privilege needs, needs no schema privilege once migrated, and only SELECT to read', async () => {
    const admin = mysql2.createPool({ uri: url, connectionLimit: 1 });
    opened.push(admin);
    const user = `ckpt_app_${process.pid}`;
    const database = new URL(url).pathname.slice(1);
    const listed =
      'SELECT, INSERT, UPDATE, DELETE, CREATE, ALTER, CREATE ROUTINE, ALTER ROUTINE, TRIGGER, EXECUTE';
    const asUser = new URL(url);
    asUser.username = user;
    asUser.password = 'app';
    const [granted, lacking] = [freshNamespace(), freshNamespace()];
    await admin.query(`DROP USER IF EXISTS '${user}'@'%'`);
    await admin.query(`CREATE USER '${user}'@'%' IDENTIFIED BY 'app'`);
    try {
      await admin.query(`GRANT ${listed} ON \`${database}\`.* TO '${user}'@'%'`);
      const store = new CheckpointStore(mysql({ url: asUser.toString(), namespace: granted }));
      await store.checkpoint('s', { step: 1 }, { idempotencyKey: 'k' });
      await store.checkpoint('s', { step: 2 }, { transcript: ['two'] });
      expect(await store.rollback('s', 1)).toBe(1);
      await store.fork('s', { newId: 'f' });
      await store.checkpoint('s', { step: 3 }, { tags: { user: 'ann' } });
      expect(await store.prune('s', { keepLast: 1 })).toBe(2);
      await store.state('scope').set('k', 1);
      expect((await store.sessions()).items).toHaveLength(2);
      await store.setTags('f', { user: 'bob' });
      expect((await store.sessions({ where: { user: 'ann' } })).items).toHaveLength(1);
      expect(await store.delete('f')).toBe(true);
      await store.close();

      await admin.query(`REVOKE CREATE ROUTINE ON \`${database}\`.* FROM '${user}'@'%'`);
      const denied = new CheckpointStore(mysql({ url: asUser.toString(), namespace: lacking }));
      const err = await denied.load('s').catch((e: unknown) => e);
      await denied.close();
      expect(isCkptError(err, 'BACKEND')).toBe(true);
      expect((err as Error).message).toMatch(
        /denied for user .*; the user lacks a privilege the store needs: grant those listed in the README/,
      );

      // Once migrated, a namespace needs no privilege that changes the schema.
      await admin.query(
        `REVOKE CREATE, ALTER, ALTER ROUTINE ON \`${database}\`.* FROM '${user}'@'%'`,
      );
      const migrated = new CheckpointStore(mysql({ url: asUser.toString(), namespace: granted }));
      const changes = migrated.watch({ sessionId: 's' });
      await changes.ready;
      await migrated.checkpoint('s', { step: 4 }, { tags: { user: 'ann', step: '4' } });
      expect((await migrated.load('s'))?.data).toEqual({ step: 4 });
      expect((await firstEvents(changes, 1)).map((e) => e.seq)).toEqual([4]);
      await migrated.close();

      // And a user that may only read opens it and reads it all; a write fails and writes nothing.
      await admin.query(
        `REVOKE INSERT, UPDATE, DELETE, TRIGGER, EXECUTE ON \`${database}\`.* FROM '${user}'@'%'`,
      );
      const reader = new CheckpointStore(mysql({ url: asUser.toString(), namespace: granted }));
      try {
        expect((await reader.load('s'))?.data).toEqual({ step: 4 });
        expect((await reader.info('s'))?.checkpoints).toBe(2);
        expect(await reader.history('s')).toEqual([3, 4]);
        expect((await reader.list('s')).items.map((c) => c.seq)).toEqual([4, 3]);
        expect((await reader.transcript('s')).items).toEqual([]);
        expect((await reader.sessions()).items.map((i) => i.sessionId)).toEqual(['s']);
        expect(
          (await reader.sessions({ where: { step: '4' } })).items.map((i) => i.sessionId),
        ).toEqual(['s']);
        expect(await reader.state('scope').get('k')).toBe(1);
        expect((await reader.state('scope').keys()).items).toEqual(['k']);
        // It may watch: the change log's reads (a locking one among them) need only SELECT.
        await reader.watch().ready;
        // And `ckpt doctor` names what it lacks to write.
        const privileges = (await reader.backend.diagnose!()).find((d) => d.check === 'privileges');
        expect(privileges).toMatchObject({ status: 'warn' });
        expect(privileges!.detail).toMatch(
          /gives this user INSERT, UPDATE, DELETE, TRIGGER, EXECUTE;/,
        );
        expect(privileges!.fix).toMatch(
          /^GRANT SELECT, INSERT, UPDATE, DELETE, TRIGGER, EXECUTE ON/,
        );
        const refused = await reader.checkpoint('s', { step: 5 }).catch((e: unknown) => e);
        expect(isCkptError(refused, 'BACKEND')).toBe(true);
        expect((refused as Error).message).toMatch(
          /command denied to user .*; the user lacks a privilege the store needs/,
        );
        const untagged = await reader.setTags('s', {}).catch((e: unknown) => e);
        expect(isCkptError(untagged, 'BACKEND')).toBe(true);
      } finally {
        await reader.close();
      }
      const after = new CheckpointStore(mysql({ url, namespace: granted }));
      expect(await after.head('s')).toBe(4);
      expect((await after.info('s'))?.tags).toEqual({ step: '4', user: 'ann' });
      await after.close();
    } finally {
      await admin.query(`DROP USER '${user}'@'%'`);
      await dropNamespace(granted);
      await dropNamespace(lacking);
    }
  });

  it('says what to do when the server refuses the user or does not have the database', async () => {
    const refused = async (change: (at: URL) => void) => {
      const at = new URL(url);
      change(at);
      const store = new CheckpointStore(mysql({ url: at.toString(), namespace: freshNamespace() }));
      const err = await store.load('s').catch((e: unknown) => e);
      await store.close();
      expect(isCkptError(err, 'BACKEND')).toBe(true);
      return (err as Error).message;
    };
    expect(
      await refused((at) => {
        at.username = `ckpt_nobody_${process.pid}`;
        at.password = 'wrong';
      }),
    ).toMatch(/Access denied.*; the server refused the login: check the user and password/);
    expect(
      await refused((at) => {
        at.pathname = `/ckpt_missing_${process.pid}`;
      }),
    ).toMatch(/Unknown database.*; the database named in the URL does not exist: create it/);
  });

  it('reports a failing server as BACKEND with the driver error as cause and no password', async () => {
    const secret = 'hunter2-very-secret';
    const store = new CheckpointStore(
      mysql({ url: `mysql://nobody:${secret}@127.0.0.1:1/test`, namespace: freshNamespace() }),
    );
    const err = await store.load('s').catch((e: unknown) => e);
    expect(isCkptError(err, 'BACKEND')).toBe(true);
    expect((err as Error).message).toMatch(/ECONNREFUSED.*check that the server is running/);
    expect((err as Error).cause).toBeInstanceOf(Error);
    const everything =
      JSON.stringify(err, Object.getOwnPropertyNames(err)) + String((err as Error).stack);
    expect(everything).not.toContain(secret);
    await store.close();
  });

  it("opens 'mysql://…?namespace=' with openStore", async () => {
    const namespace = freshNamespace();
    const store = await openStore(`${url}?namespace=${namespace}`);
    await store.checkpoint('s', 'hello');
    expect((await store.load('s'))?.data).toBe('hello');
    await store.close();
    await dropNamespace(namespace);
  });
});

// No server needed: every one of these is refused before a connection is made.
describe('mysql options', () => {
  it.each([
    ['mysql', mysql],
    ['mysqlKv', mysqlKv],
  ])('%s() refuses bad options with INVALID_ARGUMENT, never showing a password', (_, factory) =>
    expectBadConnectionOptionsRefused(factory, {
      scheme: 'mysql',
      handle: 'pool',
      switches: ['preparedStatements', 'groupCommit'],
    }),
  );
});
