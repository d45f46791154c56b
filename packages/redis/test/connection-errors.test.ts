/**
 * What a call says when it cannot reach Redis: nothing listening, a login refused, another
 * kind of server at the URL's port, a connection lost under a read or under a write.
 */
import { once } from 'node:events';
import { expectCkptError } from '@ckpt/contract-tests';
import { expectSilentServerNamed } from '@ckpt/contract-tests/servers';
import { CheckpointStore } from '@ckpt/core';
import { SERVER_HINTS } from '@ckpt/core/adapter';
import { redis } from '@ckpt/redis';
import { serviceAddress, serviceListening } from '@ckpt/test-servers';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { admin, available, dropNamespace, freshNamespace, throughProxy, url } from './support.js';

const postgresAt = serviceAddress('postgres');
const mysqlAt = serviceAddress('mysql');
const postgresUp = await serviceListening('postgres');
const mysqlUp = await serviceListening('mysql');

describe('redis connection errors', () => {
  it('says that nothing accepts connections at the address, for a read and a write, never that the call may have run', async () => {
    const backend = redis({ url: 'redis://:hunter2@127.0.0.1:1', namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    for (const call of [store.load('s'), store.checkpoint('s', 1)]) {
      const message = (await expectCkptError(call, 'BACKEND')).message;
      expect(message).toMatch(/ECONNREFUSED 127\.0\.0\.1:1.*nothing accepts connections/);
      expect(message).not.toMatch(/may or may not/);
      expect(message).not.toContain('hunter2');
    }
    await store.close();
  });

  it.skipIf(!mysqlUp)("says the server is not Redis when the URL names MySQL's port", async () => {
    const where = `${mysqlAt.host}:${mysqlAt.port}`;
    const store = new CheckpointStore(redis({ url: `redis://${where}`, namespace: 'ckpt' }));
    const message = (await expectCkptError(store.load('s'), 'BACKEND')).message;
    // MySQL greets first, in bytes that are no RESP; or, as ioredis greets too, it resets the
    // connection before ioredis reads them: either way, another kind of server is named.
    expect(message).toContain(`the server at ${where} `);
    expect(message).toMatch(
      /does not speak the Redis protocol, so the URL probably names another server's port|closed the connection before answering as Redis does: it is probably another kind of server/,
    );
    await store.close();
  });

  it.skipIf(!postgresUp)(
    "says the server is probably not Redis when the URL names PostgreSQL's port, which hangs up",
    async () => {
      const where = `${postgresAt.host}:${postgresAt.port}`;
      const store = new CheckpointStore(redis({ url: `redis://${where}`, namespace: 'ckpt' }));
      for (const call of [store.load('s'), store.checkpoint('s', 1)]) {
        const message = (await expectCkptError(call, 'BACKEND')).message;
        expect(message).toContain(`the server at ${where} closed the connection before answering`);
        expect(message).toContain('probably another kind of server');
        expect(message).not.toMatch(/may or may not/);
      }
      await store.close();
    },
  );
});

describe.skipIf(!available)('redis connection errors, with the server up', () => {
  it('asks to check the user and password in the URL when Redis refuses the login', async () => {
    const user = `ckpt_test_${freshNamespace()}`;
    await admin().call('ACL', 'SETUSER', user, 'on', '>right-password', '~*', '&*', '+@all');
    try {
      const at = new URL(url);
      at.username = user;
      at.password = 'wrong-password';
      const store = new CheckpointStore(redis({ url: at.toString(), namespace: freshNamespace() }));
      // The first call meets the refusal itself; the next, the client's record of it.
      for (const call of [store.load('s'), store.checkpoint('s', 1), store.load('s')]) {
        const message = (await expectCkptError(call, 'BACKEND')).message;
        expect(message).toMatch(/WRONGPASS/);
        expect(message).toContain(SERVER_HINTS.loginRefused);
        expect(message).not.toContain('wrong-password');
      }
      await store.close();
    } finally {
      await admin().call('ACL', 'DELUSER', user);
    }
  });

  it('says a write cut off by a lost connection may or may not have run, and a read only to retry', async () => {
    const { proxy, backend, store } = await throughProxy();
    const client = backend.client as Redis;
    try {
      await store.checkpoint('s', 0); // connected, the scripts cached
      await store.load('s', 1);
      const cutNextReply = async () => {
        if (client.status !== 'ready') await once(client, 'ready');
        proxy.cutAfter(0, 'toClient');
      };

      await cutNextReply();
      const read = (await expectCkptError(store.load('s', 1), 'BACKEND')).message;
      expect(read).toMatch(/lost the connection to Redis at .* during a read; retry it/);
      expect(read).not.toMatch(/may or may not/);

      await cutNextReply();
      const write = (await expectCkptError(store.checkpoint('s', 1), 'BACKEND')).message;
      expect(write).toMatch(/lost the connection to Redis at .* during a write, so the call/);
      expect(write).toContain(SERVER_HINTS.connectionLost);
    } finally {
      proxy.disarm();
      await store.close();
      await proxy.close();
      await dropNamespace(admin(), backend.namespace);
    }
  });
});

describe('redis pointed at a server that never answers', () => {
  it('gives up after connectTimeout and says nothing answered there', async () => {
    await expectSilentServerNamed('Redis', (address) => {
      const url = `redis://${address}?connectTimeout=1000`;
      return new CheckpointStore(redis({ url, namespace: freshNamespace() }));
    });
  });

  it('refuses a connectTimeout that is no whole number of milliseconds', async () => {
    const url = 'redis://:hunter2@127.0.0.1:6379?connectTimeout=soon';
    const err = await expectCkptError(async () => redis({ url }), 'INVALID_ARGUMENT');
    expect(err.message).toContain(
      "connectTimeout must be a whole number of milliseconds; got 'soon'",
    );
    expect(err.message).not.toContain('hunter2');
  });
});
