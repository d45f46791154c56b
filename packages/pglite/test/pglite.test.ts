/** What `pglite()` and `openStore('pglite:…')` add to the PostgreSQL adapter they run. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectCkptError } from '@ckpt/contract-tests';
import { CheckpointStore, openStore } from '@ckpt/core';
import { pglite } from '@ckpt/pglite';
import { PGlite } from '@electric-sql/pglite';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-pglite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

describe('pglite', () => {
  it("keeps a store in a directory across a close and an open of 'pglite:<dir>'", async () => {
    const path = join(dir, 'kept');
    const first = await openStore(`pglite:${path}`);
    await first.checkpoint('s', { step: 1 }, { transcript: ['hello'] });
    await first.checkpoint('s', { step: 2 });
    await first.close();
    const again = await openStore(`pglite:${path}`, { create: false });
    expect(await again.history('s')).toEqual([1, 2]);
    expect((await again.load('s', 1))?.data).toEqual({ step: 1 });
    await again.close();
  }, 120_000);

  it("opens 'pglite:memory', gone when it closes", async () => {
    const store = await openStore('pglite:memory?namespace=agents');
    await store.checkpoint('s', 'in memory');
    expect((await store.load('s'))?.data).toBe('in memory');
    await store.close();
  }, 120_000);

  it('opens no database where none is with create: false, and makes no directory', async () => {
    const path = join(dir, 'misspelt');
    const err = await expectCkptError(openStore(`pglite:${path}`, { create: false }), 'NOT_FOUND');
    expect(err.message).toContain('no database at');
    expect(existsSync(path)).toBe(false);
  });

  it('leaves a PGlite of your own open when the store closes', async () => {
    const db = new PGlite();
    const store = new CheckpointStore(pglite({ db }));
    await store.checkpoint('s', 1);
    await store.close();
    expect(db.closed).toBe(false);
    expect((await db.query('SELECT count(*)::int AS n FROM ckpt.checkpoints')).rows).toEqual([
      { n: 1 },
    ]);
    await db.close();
  }, 120_000);

  it('refuses options it cannot read, naming them', async () => {
    const db = new PGlite();
    expect(() => pglite({ path: join(dir, 'x'), db })).toThrow('takes `path` or `db`, not both');
    expect(() => pglite({ path: '' })).toThrow('needs `path` as the directory');
    expect(() => pglite({ dir: 'x' } as never)).toThrow('pglite() options has no option "dir"');
    await db.close();
  });

  it("refuses 'pglite:' with nothing after it, or with '//'", async () => {
    for (const url of ['pglite:', 'pglite://data']) {
      const err = await expectCkptError(openStore(url), 'INVALID_ARGUMENT');
      expect(err.message).toContain("'pglite:memory' or 'pglite:./ckpt-data'");
    }
  });
});
