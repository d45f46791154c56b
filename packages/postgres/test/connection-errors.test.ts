/** What a call says when the URL's port belongs to another kind of server than PostgreSQL. */
import { expectCkptError } from '@ckpt/contract-tests';
import { expectSilentServerNamed } from '@ckpt/contract-tests/servers';
import { CheckpointStore, kvBackend } from '@ckpt/core';
import { postgres, postgresKv } from '@ckpt/postgres';
import { serviceAddress, serviceListening, serviceUrl } from '@ckpt/test-servers';
import pg from 'pg';
import { describe, expect, it } from 'vitest';

const mysqlAt = serviceAddress('mysql');
const redisAt = serviceAddress('redis');
const mysqlUp = await serviceListening('mysql');
const postgresUp = await serviceListening('postgres');
const redisUp = await serviceListening('redis');

describe('postgres pointed at another server', () => {
  it.skipIf(!mysqlUp)(
    "says the server does not speak PostgreSQL when the URL names MySQL's port",
    async () => {
      const where = `${mysqlAt.host}:${mysqlAt.port}`;
      const store = new CheckpointStore(postgres({ url: `postgres://postgres@${where}/test` }));
      const message = (await expectCkptError(store.load('s'), 'BACKEND')).message;
      expect(message).toContain(`the server at ${where} does not speak the PostgreSQL protocol`);
      expect(message).toContain("names another server's port");
      await store.close();
    },
  );

  it.skipIf(!redisUp)(
    "says nothing answered as PostgreSQL in time when the URL names Redis's port, which waits silently",
    async () => {
      const where = `${redisAt.host}:${redisAt.port}`;
      // pg waits for a connection without limit unless given one.
      const pool = new pg.Pool({
        connectionString: `postgres://postgres@${where}/test`,
        connectionTimeoutMillis: 500,
      });
      pool.on('error', () => {});
      // The backend and the KV store word it alike.
      for (const backend of [postgres({ pool }), kvBackend(postgresKv({ pool }))]) {
        const store = new CheckpointStore(backend);
        const message = (await expectCkptError(store.load('s'), 'BACKEND')).message;
        expect(message).toContain(`nothing at ${where} answered as PostgreSQL in time`);
        expect(message).toContain('check the port in the URL');
        await store.close();
      }
      await pool.end();
    },
  );
});

describe('postgres pointed at a server that never answers', () => {
  it('gives up after connect_timeout and says nothing answered there', async () => {
    await expectSilentServerNamed('PostgreSQL', (address) => {
      const url = `postgres://postgres@${address}/test?connect_timeout=1`;
      return new CheckpointStore(postgres({ url }));
    });
  });

  it('gives up the same way in the KV store', async () => {
    await expectSilentServerNamed('PostgreSQL', (address) => {
      const url = `postgres://postgres@${address}/test?connect_timeout=1`;
      return new CheckpointStore(kvBackend(postgresKv({ url })));
    });
  });

  it('refuses a connect_timeout that is no whole number of seconds', async () => {
    const url = 'postgres://postgres:hunter2@127.0.0.1:5432/test?connect_timeout=soon';
    const err = await expectCkptError(async () => postgres({ url }), 'INVALID_ARGUMENT');
    expect(err.message).toContain("connect_timeout must be a whole number of seconds; got 'soon'");
    expect(err.message).not.toContain('hunter2');
  });
});

describe.skipIf(!postgresUp)('postgres URLs without a database', () => {
  const noDatabase = (user: string) => {
    const at = new URL(serviceUrl('postgres'));
    at.username = user;
    at.pathname = '';
    return at.toString();
  };

  it('names the default database where it looked for a store', async () => {
    const url = noDatabase(new URL(serviceUrl('postgres')).username);
    const user = new URL(url).username;
    const store = new CheckpointStore(
      postgres({ url, namespace: `t${process.pid}_absent`, create: false }),
    );
    const err = await expectCkptError(store.load('s'), 'NOT_FOUND');
    expect(err.message).toContain(`at ${url} (database '${user}', the default)`);
    await store.close();
  });

  it('says the URL names no database when the default one is missing', async () => {
    const role = `ckpt_nodb_${process.pid}`;
    const admin = new pg.Client({ connectionString: serviceUrl('postgres') });
    await admin.connect();
    await admin.query(`DROP ROLE IF EXISTS ${role}`);
    await admin.query(`CREATE ROLE ${role} LOGIN PASSWORD 'pw'`);
    try {
      const at = new URL(noDatabase(role));
      at.password = 'pw';
      const store = new CheckpointStore(postgres({ url: at.toString() }));
      const err = await expectCkptError(store.load('s'), 'BACKEND');
      expect(err.message).toContain(
        `the URL names no database, so pg asked for '${role}', the default (PGDATABASE, else the user's name): add one after the port`,
      );
      await store.close();
    } finally {
      await admin.query(`DROP ROLE IF EXISTS ${role}`);
      await admin.end();
    }
  });
});
