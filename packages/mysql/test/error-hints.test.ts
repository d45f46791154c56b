import { SERVER_HINTS } from '@ckpt/core/adapter';
import { describe, expect, it } from 'vitest';
import { mysqlErrorHint } from '../src/error-hints.js';

const failure = (code: string) => Object.assign(new Error(`refused (${code})`), { code });

describe('mysqlErrorHint', () => {
  it.each([
    {
      codes: ['ER_ACCESS_DENIED_ERROR', 'ER_ACCESS_DENIED_NO_PASSWORD_ERROR'],
      hint: SERVER_HINTS.loginRefused,
    },
    { codes: ['ER_BAD_DB_ERROR'], hint: SERVER_HINTS.missingDatabase },
    {
      codes: [
        'ER_DBACCESS_DENIED_ERROR',
        'ER_TABLEACCESS_DENIED_ERROR',
        'ER_PROCACCESS_DENIED_ERROR',
        'ER_SPECIFIC_ACCESS_DENIED_ERROR',
      ],
      hint: SERVER_HINTS.missingPrivilege,
    },
  ])('says what to do about $codes.0 and its kind', ({ codes, hint }) => {
    for (const code of codes) expect(mysqlErrorHint(failure(code))).toBe(hint);
  });

  it('says nothing of a code it has no remedy for', () => {
    expect(mysqlErrorHint(failure('ER_DUP_ENTRY'))).toBeUndefined();
  });
});
