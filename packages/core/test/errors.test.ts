import { describe, expect, it } from 'vitest';
import { hintsByCode, SERVER_HINTS } from '../src/adapter/server-hints.js';
import { CkptError, isCkptError, redactPasswords, toCkptError } from '../src/values/errors.js';

describe('CkptError', () => {
  it('is recognised by isCkptError across two copies of the package', async () => {
    // A second evaluation of the module stands in for the CJS copy beside the ESM one.
    const specifier = '../src/values/errors.js?copy';
    const copy: typeof import('../src/values/errors.js') = await import(
      /* @vite-ignore */ specifier
    );
    const foreign = new copy.CkptError('CONFLICT', 'from the other copy');
    expect(foreign instanceof CkptError).toBe(false);
    expect(isCkptError(foreign)).toBe(true);
    expect(isCkptError(foreign, 'CONFLICT')).toBe(true);
    expect(isCkptError(foreign, 'NOT_FOUND')).toBe(false);
  });

  it('is not confused with other errors', () => {
    expect(isCkptError(new Error('x'))).toBe(false);
    expect(isCkptError({ code: 'CONFLICT' })).toBe(false);
    expect(isCkptError(null)).toBe(false);
  });
});

describe('redactPasswords', () => {
  it('hides the password of every URL in a text', () => {
    const text =
      'connect postgres://me:s3cret@db:5432/x failed; also redis://:hunter2@127.0.0.1:6379';
    const out = redactPasswords(text);
    expect(out).not.toContain('s3cret');
    expect(out).not.toContain('hunter2');
    expect(out).toContain('postgres://me:***@db:5432/x');
  });

  it('hides a password typed with @ or / in it, up to the last @', () => {
    for (const password of ['p@ss', 'p/ss', 'p@s/s@']) {
      const out = redactPasswords(`cannot reach mysql://me:${password}@db:3306/x now`);
      expect(out).toBe('cannot reach mysql://me:***@db:3306/x now');
    }
  });

  it('leaves URLs without a password alone', () => {
    expect(redactPasswords('mysql://root@127.0.0.1:3306/test')).toBe(
      'mysql://root@127.0.0.1:3306/test',
    );
  });
});

describe('toCkptError', () => {
  it('wraps a driver error as BACKEND, keeping the cause and hiding passwords', () => {
    const cause = new Error('cannot reach postgres://u:pw123@h/db');
    const err = toCkptError(cause, 'postgres');
    expect(err.code).toBe('BACKEND');
    expect(err.cause).toBe(cause);
    expect(err.message).not.toContain('pw123');
  });

  it('says what to do about a connection that could not be made or was lost', () => {
    const refused = Object.assign(new Error('connect ECONNREFUSED 127.0.0.1:5432'), {
      code: 'ECONNREFUSED',
    });
    expect(toCkptError(refused, 'postgres').message).toBe(
      'postgres backend failed: connect ECONNREFUSED 127.0.0.1:5432; nothing accepts connections there: check that the server is running and that the URL names its host and port.',
    );
    const reset = Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
    expect(toCkptError(reset, 'mysql').message).toBe(
      `mysql backend failed: read ECONNRESET; the connection broke, so ${SERVER_HINTS.connectionLost}.`,
    );
    expect(toCkptError(new Error('boom'), 'mysql').message).toBe('mysql backend failed: boom');
  });

  it("ends the message with the backend's hint for a failure only it knows", () => {
    const refused = Object.assign(new Error('password authentication failed'), { code: 'X1' });
    const hint = hintsByCode({ X1: 'check the password in the URL' });
    expect(toCkptError(refused, 'postgres', hint).message).toBe(
      'postgres backend failed: password authentication failed; check the password in the URL.',
    );
    expect(toCkptError(new Error('boom'), 'postgres', hint).message).toBe(
      'postgres backend failed: boom',
    );
  });

  it("asks the backend first, and says what to do about Node's connection errors when it has nothing to say", () => {
    const timedOut = Object.assign(new Error('connect ETIMEDOUT'), { code: 'ETIMEDOUT' });
    const handshake = () => 'nothing at h:1 answered as MySQL in time';
    expect(toCkptError(timedOut, 'mysql', handshake).message).toBe(
      'mysql backend failed: connect ETIMEDOUT; nothing at h:1 answered as MySQL in time.',
    );
    const refused = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    expect(toCkptError(refused, 'mysql', () => undefined).message).toMatch(
      /nothing accepts connections/,
    );
  });

  it('ends a reason that is a sentence of its own with the hint, not two full stops', () => {
    const lost = new Error('Connection lost: The server closed the connection.');
    expect(toCkptError(lost, 'mysql', () => SERVER_HINTS.connectionLost).message).toBe(
      `mysql backend failed: Connection lost: The server closed the connection; ${SERVER_HINTS.connectionLost}.`,
    );
    expect(toCkptError(lost, 'mysql').message).toBe(
      'mysql backend failed: Connection lost: The server closed the connection.',
    );
  });

  it('keeps the failure as it is when the backend hint itself fails', () => {
    const cause = Object.assign(new Error('connect ECONNREFUSED'), { code: 'ECONNREFUSED' });
    const broken = () => {
      throw new TypeError('Cannot read private member');
    };
    const err = toCkptError(cause, 'postgres', broken);
    expect(err.cause).toBe(cause);
    expect(err.message).toMatch(/^postgres backend failed: connect ECONNREFUSED; nothing accepts/);
  });

  it('passes a CkptError through unchanged', () => {
    const err = new CkptError('CONFLICT', 'x');
    expect(toCkptError(err, 'memory')).toBe(err);
  });
});

describe('hintsByCode', () => {
  it("answers a failure's code from its table, and nothing for any other", () => {
    const hint = hintsByCode({ '28P01': SERVER_HINTS.loginRefused });
    expect(hint(Object.assign(new Error('x'), { code: '28P01' }))).toBe(SERVER_HINTS.loginRefused);
    expect(hint(Object.assign(new Error('x'), { code: '3D000' }))).toBeUndefined();
    expect(hint(new Error('no code'))).toBeUndefined();
    // A code that names a property every object has is not in the table.
    expect(hint(Object.assign(new Error('x'), { code: 'toString' }))).toBeUndefined();
  });
});
