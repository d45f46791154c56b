/** What the store says when the URL lacks a database, or names another kind of server's port. */
import { expectCkptError } from '@ckpt/contract-tests';
import { expectSilentServerNamed } from '@ckpt/contract-tests/servers';
import { CheckpointStore, kvBackend, openStore } from '@ckpt/core';
import { mysql, mysqlKv } from '@ckpt/mysql';
import { serviceAddress, serviceListening } from '@ckpt/test-servers';
import { describe, expect, it } from 'vitest';

const postgresAt = serviceAddress('postgres');
const redisAt = serviceAddress('redis');
const postgresUp = await serviceListening('postgres');
const redisUp = await serviceListening('redis');

describe('mysql URLs', () => {
  it.each([
    ['mysql()', (url: string) => mysql({ url })],
    ['mysqlKv()', (url: string) => mysqlKv({ url })],
    ['openStore()', (url: string) => openStore(url)],
  ])('%s refuses a URL without a database, saying to add /dbname', async (_, open) => {
    for (const url of ['mysql://root@127.0.0.1:3306', 'mysql://root:secret@127.0.0.1:3306/']) {
      const err = await expectCkptError(async () => open(url), 'INVALID_ARGUMENT');
      expect(err.message).toContain(
        "add one after the port, as in 'mysql://user@host:3306/dbname'",
      );
      expect(err.message).not.toContain('secret');
      expect(err.details.argument).toBe('url');
    }
  });
});

describe('mysql pointed at another server', () => {
  // mysql2 waits for the server to speak first, as these servers wait for their own clients:
  // a short connect timeout ends the wait.
  const pairs = [
    ['PostgreSQL', postgresAt, postgresUp],
    ['Redis', redisAt, redisUp],
  ] as const;
  for (const [server, at, up] of pairs) {
    it.skipIf(!up)(
      `says nothing answered as MySQL in time when the URL names ${server}'s port`,
      async () => {
        const where = `${at.host}:${at.port}`;
        const url = `mysql://root@${where}/test?connectTimeout=500`;
        for (const backend of [mysql({ url }), kvBackend(mysqlKv({ url }))]) {
          const store = new CheckpointStore(backend);
          const message = (await expectCkptError(store.load('s'), 'BACKEND')).message;
          expect(message).toContain(`nothing at ${where} answered as MySQL in time`);
          expect(message).toContain('check the port in the URL');
          await store.close();
        }
      },
    );
  }
});

describe('mysql pointed at a server that never answers', () => {
  it('gives up after connectTimeout and says nothing answered there', async () => {
    await expectSilentServerNamed('MySQL', (address) => {
      const url = `mysql://root@${address}/test?connectTimeout=1000`;
      return new CheckpointStore(mysql({ url }));
    });
  });
});
