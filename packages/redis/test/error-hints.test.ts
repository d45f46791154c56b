import { SERVER_HINTS } from '@ckpt/core/adapter';
import { describe, expect, it } from 'vitest';
import { redisErrorHint } from '../src/error-hints.js';

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
