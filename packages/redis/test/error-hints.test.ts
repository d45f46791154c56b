import { expectCkptError } from '@ckpt/contract-tests';
import { CheckpointStore } from '@ckpt/core';
import { SERVER_HINTS } from '@ckpt/core/adapter';
import type { Redis } from 'ioredis';
import { describe, expect, it } from 'vitest';
import { redisErrorHint } from '../src/error-hints.js';
import { admin, available, dropNamespace, freshBackend } from './support.js';

describe('redisErrorHint', () => {
  it.each([
    'WRONGPASS invalid username-password pair or user is disabled.',
    'NOAUTH Authentication required.',
    'NOAUTH HELLO must be called with the client already authenticated',
  ])('asks to check the user and password in the URL for %s', (message) => {
    expect(redisErrorHint(new Error(message))).toBe(SERVER_HINTS.loginRefused);
  });

  it('says nothing of an error it has no remedy for', () => {
    expect(redisErrorHint(new Error('ERR unknown command'))).toBeUndefined();
    expect(redisErrorHint(new Error('NOAUTHORITY x'))).toBeUndefined();
    expect(redisErrorHint(null)).toBeUndefined();
  });
});

describe.skipIf(!available)('redis connections lost on the real server', () => {
  it('says a write whose connection the server closed may or may not have run, and a read only to retry', async () => {
    const backend = freshBackend();
    const store = new CheckpointStore(backend);
    const client = backend.client as Redis;
    try {
      await store.checkpoint('s', 0); // connected, the scripts cached
      /**
       * `call` sent while the store's connection waits on a blocking command of its own, and
       * the connection killed by the server as the call waits behind it, unread.
       */
      const killedUnder = async (call: () => Promise<unknown>) => {
        if (client.status !== 'ready')
          await new Promise((resolve) => client.once('ready', resolve));
        const id = String(await client.client('ID'));
        const blocking = `${backend.namespace}:blocking`;
        void client.blpop(blocking, 30).catch(() => {});
        const failed = expectCkptError(call(), 'BACKEND');
        let line = '';
        while (!/ qbuf=[1-9]/.test(line) || !/ cmd=blpop /.test(line)) {
          line = String(await admin().client('LIST', 'ID', id));
        }
        await admin().client('KILL', 'ID', id);
        return (await failed).message;
      };

      const write = await killedUnder(() => store.checkpoint('s', 1));
      expect(write).toMatch(/lost the connection to Redis at .* during a write/);
      expect(write).toContain(SERVER_HINTS.connectionLost);

      const read = await killedUnder(() => store.load('s', 1));
      expect(read).toMatch(/lost the connection to Redis at .* during a read; retry it/);
      expect(read).not.toContain('may or may not');
    } finally {
      await store.close();
      await dropNamespace(admin(), backend.namespace);
    }
  });
});
