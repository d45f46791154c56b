/** What a call says when the URL's port belongs to another kind of server than PostgreSQL. */
import {
  expectCkptError,
  expectSilentServerNamed,
  serviceAddress,
  serviceListening,
} from '@ckpt/contract-tests';
import { CheckpointStore, kvBackend } from '@ckpt/core';
import { postgres, postgresKv } from '@ckpt/postgres';
import pg from 'pg';
import { describe, expect, it } from 'vitest';

const mysqlAt = serviceAddress('mysql');
const redisAt = serviceAddress('redis');
const mysqlUp = await serviceListening('mysql');
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
