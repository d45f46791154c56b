/** `openStore(url, { create: false })` on every scheme. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectCkptError } from '@ckpt/contract-tests';
import { URL_STORES } from '@ckpt/test-stores';
import { afterAll, describe, expect, it } from 'vitest';
import { openStore } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-core-existing-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const unique = () => `e${process.pid}_${Math.random().toString(36).slice(2, 10)}`;

describe('openStore(url, { create: false })', () => {
  it('opens memory: as a new, empty store', async () => {
    const store = await openStore('memory:?namespace=agents', { create: false });
    expect((await store.sessions()).items).toEqual([]);
    await store.close();
  });

  it.each(URL_STORES)(
    'rejects a $name store that is not there with NOT_FOUND, and opens it once it is',
    async ({ url }) => {
      const at = url(unique(), dir);
      const err = await expectCkptError(openStore(at, { create: false }), 'NOT_FOUND');
      expect(err.message).toMatch(
        /^there is no ckpt store in .*open it without \{ create: false \}/,
      );
      const made = await openStore(at);
      await made.checkpoint('s', 1);
      await made.close();
      const store = await openStore(at, { create: false });
      expect(await store.head('s')).toBe(1);
      await store.destroy();
    },
  );

  it('refuses create that is not a boolean, and options it does not take', async () => {
    const err = await expectCkptError(
      openStore('memory:', { create: 'no' as never }),
      'INVALID_ARGUMENT',
    );
    expect(err.message).toBe('openStore() needs create to be true or false; got "no".');
    const misspelt = await expectCkptError(
      openStore('memory:', { craete: false } as never),
      'INVALID_ARGUMENT',
    );
    expect(misspelt.message).toMatch(/no option "craete"/);
  });
});
