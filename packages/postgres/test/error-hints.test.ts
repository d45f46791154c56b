import { SERVER_HINTS } from '@ckpt/core/adapter';
import { describe, expect, it } from 'vitest';
import { postgresErrorHint } from '../src/error-hints.js';

const failure = (code: string) => Object.assign(new Error(`refused (${code})`), { code });

describe('postgresErrorHint', () => {
  it.each([
    { codes: ['28P01', '28000'], hint: SERVER_HINTS.loginRefused },
    { codes: ['3D000'], hint: SERVER_HINTS.missingDatabase },
    { codes: ['42501'], hint: SERVER_HINTS.missingPrivilege },
  ])('says what to do about SQLSTATE $codes.0 and its kind', ({ codes, hint }) => {
    for (const code of codes) expect(postgresErrorHint(failure(code))).toBe(hint);
  });

  it('says nothing of a SQLSTATE it has no remedy for', () => {
    expect(postgresErrorHint(failure('23505'))).toBeUndefined();
  });
});
