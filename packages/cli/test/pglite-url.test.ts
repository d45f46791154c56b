/**
 * `ckpt --store pglite:<dir>`: the command opens a PGlite database by URL, as it opens every
 * other backend, and changes nothing where there is none. In-process (`main`): each run of the
 * built executable would start PGlite again, which takes seconds.
 */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '@ckpt/core';
import { afterAll, expect, it } from 'vitest';
import { ckptInProcess } from './support/in-process.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-pglite-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const ckpt = (args: string[]) => ckptInProcess(args);

it('lists the sessions of a PGlite directory, and refuses one that is not there', async () => {
  const path = join(dir, 'agents');
  const store = await openStore(`pglite:${path}`);
  await store.checkpoint('thread-1', { step: 1 });
  await store.checkpoint('thread-1', { step: 2 });
  await store.close();
  const listed = await ckpt(['--store', `pglite:${path}`, 'sessions', '--json']);
  expect(listed.stderr).toBe('');
  expect(JSON.parse(listed.stdout).items).toMatchObject([{ sessionId: 'thread-1', head: 2 }]);
  const missing = await ckpt(['--store', `pglite:${join(dir, 'misspelt')}`, 'sessions']);
  expect(missing.code).toBe(3);
  expect(missing.stderr).toContain('no database at');
  expect(existsSync(join(dir, 'misspelt'))).toBe(false);
}, 120_000);
