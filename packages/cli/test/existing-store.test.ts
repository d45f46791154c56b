/**
 * The built `ckpt` against a store that is not there, on every backend a URL reaches: no
 * command but import and copy's target creates one; and `ckpt destroy`.
 */
import { existsSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { isCkptError, openStore } from '@ckpt/core';
import { URL_STORES } from '@ckpt/test-stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, ckpt } from './support/binary.js';
import { madeStores } from './support/made-stores.js';
import { fill } from './support/store-fill.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-existing-'));
beforeAll(buildCli, 300_000);

const stores = madeStores('cli');
const { unique } = stores;
afterAll(async () => {
  await stores.destroyAll();
  rmSync(dir, { recursive: true, force: true });
});

/** Whether a store is at `url` (opening it without creating one). */
async function isThere(url: string): Promise<boolean> {
  try {
    await (await openStore(url, { create: false })).close();
    return true;
  } catch (err) {
    if (isCkptError(err, 'NOT_FOUND')) return false;
    throw err;
  }
}

describe.each(URL_STORES)('ckpt on a $name store that is not there', (backend) => {
  const missing = () => {
    const url = backend.url(unique(), dir);
    stores.track(url);
    return url;
  };

  it('exits 3 from sessions with one line saying what to check, and creates nothing', async () => {
    const url = missing();
    const run = await ckpt(['--store', url, 'sessions']);
    expect(run.code).toBe(3);
    expect(run.stdout).toBe('');
    expect(run.stderr).toMatch(
      /^ckpt: error NOT_FOUND: there is no ckpt store in .* at .* \(.*\); check the (path|URL) and the namespace\. Nothing was created: only ckpt import and ckpt copy --to create a store\.\n$/,
    );
    expect(await isThere(url)).toBe(false);
    if (backend.name === 'sqlite') expect(existsSync(url.slice('sqlite:'.length))).toBe(false);
  });

  it('says with doctor that the store does not exist, exits 7, and creates nothing', async () => {
    const url = missing();
    const run = await ckpt(['--store', url, 'doctor']);
    expect(run.code).toBe(7);
    expect(run.stdout).toMatch(/^✗ exists {2}there is no ckpt store in .*\n$/);
    const json = await ckpt(['--store', url, 'doctor', '--json']);
    expect(json.code).toBe(7);
    expect(JSON.parse(json.stdout)).toEqual([
      { check: 'exists', status: 'fail', detail: expect.stringMatching(/^there is no ckpt store/) },
    ]);
    expect(await isThere(url)).toBe(false);
  });

  it('exits 3 from every command that reads or changes a store, and creates nothing', async () => {
    const url = missing();
    const target = missing();
    for (const args of [
      ['show', 'x'],
      ['tree', 'x'],
      ['transcript', 'x'],
      ['history', 'x'],
      ['rollback', 'x', '1'],
      ['fork', 'x'],
      ['prune', 'x', '--keep-last', '1'],
      ['delete', 'x', '--yes'],
      ['state', 'prefs', 'get', 'k'],
      ['state', 'prefs', 'set', 'k', '1'],
      ['state', 'prefs', 'delete', 'k'],
      ['state', 'prefs', 'keys'],
      ['export'],
      ['destroy', '--yes'],
    ]) {
      const run = await ckpt(['--store', url, ...args]);
      expect({ args, code: run.code }).toEqual({ args, code: 3 });
    }
    const copy = await ckpt(['copy', '--from', url, '--to', target]);
    expect(copy.code).toBe(3);
    expect(await isThere(url)).toBe(false);
    expect(await isThere(target)).toBe(false);
  });

  it('creates nothing when what import reads is no export, or cannot be read', async () => {
    const url = missing();
    const inputs = {
      empty: '',
      'not JSON': 'session,checkpoint\n',
      'no header': `${JSON.stringify({ type: 'end', sessions: 0, checkpoints: 0, state: 0 })}\n`,
    };
    for (const [name, text] of Object.entries(inputs)) {
      const file = join(dir, `${unique()}.jsonl`);
      writeFileSync(file, text);
      const run = await ckpt(['--store', url, 'import', file]);
      expect({ name, code: run.code }).toEqual({ name, code: 5 });
      expect(run.stderr).toMatch(/^ckpt: error INVALID_ARGUMENT: export line 1 /);
      expect({ name, there: await isThere(url) }).toEqual({ name, there: false });
    }
    const absent = await ckpt(['--store', url, 'import', join(dir, 'no-such.jsonl')]);
    expect(absent.code).toBe(2);
    expect(await isThere(url)).toBe(false);
    if (backend.name === 'sqlite') expect(existsSync(url.slice('sqlite:'.length))).toBe(false);
  });

  it('creates no copy target when the source cannot be reached', async () => {
    const target = missing();
    const run = await ckpt(['copy', '--from', 'redis://127.0.0.1:1', '--to', target]);
    expect(run.code).toBe(6);
    expect(run.stderr).toContain('ECONNREFUSED 127.0.0.1:1');
    expect(await isThere(target)).toBe(false);
  });

  it('creates the store with import', async () => {
    const url = missing();
    const file = join(dir, `${unique()}.jsonl`);
    writeFileSync(
      file,
      `${JSON.stringify({ type: 'header', format: 'ckpt-export', version: 1, exportedAt: new Date().toISOString() })}\n${JSON.stringify({ type: 'end', sessions: 0, checkpoints: 0, state: 0 })}\n`,
    );
    expect((await ckpt(['--store', url, 'import', file])).code).toBe(0);
    expect(await isThere(url)).toBe(true);
    const listed = await ckpt(['--store', url, 'sessions', '--json']);
    expect(JSON.parse(listed.stdout)).toEqual({ items: [], cursor: null });
  });
});

describe.each(URL_STORES)('ckpt destroy on $name', (backend) => {
  /** A filled store in a namespace of its own, and its URL. */
  async function filled(): Promise<string> {
    const url = backend.url(unique(), dir);
    stores.track(url);
    const store = await openStore(url);
    await fill(store);
    await store.close();
    return url;
  }

  it('refuses in a pipe without --yes, removing nothing', async () => {
    const url = await filled();
    const run = await ckpt(['--store', url, 'destroy']);
    expect(run.code).toBe(2);
    expect(run.stderr).toBe(
      `ckpt: destroy removes ${url} for good, with 7 sessions and 3 state scopes; pass --yes to confirm when not at a terminal. Nothing was removed.\n`,
    );
    const store = await openStore(url, { create: false });
    expect((await store.sessions()).items).toHaveLength(7);
    await store.close();
  });

  it('removes the namespace with --yes, saying how many sessions it held, and leaves another namespace', async () => {
    const [url, other] = [await filled(), await filled()];
    const run = await ckpt(['--store', url, 'destroy', '--yes']);
    expect(run).toEqual({
      code: 0,
      stdout: `destroyed ${url}: removed 7 sessions and 3 state scopes\n`,
      stderr: '',
    });
    expect(await isThere(url)).toBe(false);
    const kept = await openStore(other, { create: false });
    expect((await kept.sessions()).items).toHaveLength(7);
    await kept.close();
  });

  it('prints what it removed as JSON with --json', async () => {
    const url = await filled();
    const run = await ckpt(['--store', url, 'destroy', '--yes', '--json']);
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      store: url,
      destroyed: true,
      sessions: 7,
      stateScopes: 3,
    });
  });
});
