import { describe, expect, it } from 'vitest';
import { CkptError, isCkptError, redactPasswords, toCkptError } from '../src/errors.js';

describe('CkptError', () => {
  it('is recognised by isCkptError across two copies of the package', async () => {
    // A second evaluation of the module stands in for the CJS copy beside the ESM one.
    const specifier = '../src/errors.js?copy';
    const copy: typeof import('../src/errors.js') = await import(/* @vite-ignore */ specifier);
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
    expect(toCkptError(reset, 'mysql').message).toMatch(/may or may not have run: retry it/);
    expect(toCkptError(new Error('boom'), 'mysql').message).toBe('mysql backend failed: boom');
  });

  it.each([
    {
      codes: ['28P01', '28000', 'ER_ACCESS_DENIED_ERROR', 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR'],
      hint: /; the server refused the login: check the user and password in the URL\.$/,
    },
    {
      codes: ['3D000', 'ER_BAD_DB_ERROR'],
      hint: /; the database named in the URL does not exist: create it/,
    },
    {
      codes: [
        '42501',
        'ER_DBACCESS_DENIED_ERROR',
        'ER_TABLEACCESS_DENIED_ERROR',
        'ER_PROCACCESS_DENIED_ERROR',
        'ER_SPECIFIC_ACCESS_DENIED_ERROR',
      ],
      hint: /; the user lacks a privilege the store needs: grant those listed in the README/,
    },
  ])('says what to do about the server refusing $codes.0 and its kind', ({ codes, hint }) => {
    for (const code of codes) {
      const refused = Object.assign(new Error(`refused (${code})`), { code });
      expect(toCkptError(refused, 'postgres').message).toMatch(hint);
    }
  });

  it('passes a CkptError through unchanged', () => {
    const err = new CkptError('CONFLICT', 'x');
    expect(toCkptError(err, 'memory')).toBe(err);
  });
});
