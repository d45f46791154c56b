/**
 * `ckpt copy` between every pair of backends: memory, SQLite, PostgreSQL, MariaDB, Redis (a
 * server and a cluster) and a kvBackend. Every read must answer the same on both sides. The
 * command runs in-process here (`main`), so that stores no URL reaches (memory, a kvBackend)
 * take part; the built executable is run as a child process in binary.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeReads } from '@ckpt/contract-tests';
import { type CheckpointBackend, CheckpointStore } from '@ckpt/core';
import { emptyStore, STORES, storesOn } from '@ckpt/test-stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { ckptInProcess } from './support/in-process.js';
import { FILLED_SCOPES, fill } from './support/store-fill.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-copy-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

// A KV of get/set/delete alone cannot list its sessions: nothing can be copied out of it, and
// no copy into it can be read back whole to compare.
const backends = STORES.filter((s) => !s.singleWriter);
const sources = new Map<string, CheckpointStore>();
const targets = new Map<string, CheckpointStore>();
const handles: { closeAll(): Promise<void> }[] = [];

beforeAll(async () => {
  for (const backend of backends) {
    const source = storesOn(backend, 'cli_copy_from', dir, FILLED_SCOPES);
    const target = storesOn(backend, 'cli_copy_to', dir, FILLED_SCOPES);
    handles.push(source, target);
    const from = await source.open();
    await emptyStore(from, FILLED_SCOPES);
    await fill(from);
    sources.set(backend.name, from);
    targets.set(backend.name, await target.open());
  }
}, 120_000);
afterAll(async () => {
  for (const handle of handles) await handle.closeAll();
});

/** The backend, as the command's own store: closing it leaves the test's store open. */
function unclosable(backend: CheckpointBackend): CheckpointBackend {
  return new Proxy(backend, {
    get(target, property) {
      if (property === 'close') return async () => {};
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

/** Run `ckpt` in-process, with `test:<name>` URLs naming the stores above. */
const ckpt = (args: string[]) =>
  ckptInProcess(args, {
    open: async (url) => {
      const [role, name] = url.split(':') as ['from' | 'to', string];
      const store = (role === 'from' ? sources : targets).get(name)!;
      return new CheckpointStore(unclosable(store.backend));
    },
  });

describe.each(backends.map((b) => b.name))('ckpt copy from %s', (from) => {
  it.each(backends.map((b) => b.name).filter((to) => to !== from))(
    'to %s: every read the same on both sides',
    async (to) => {
      const target = targets.get(to)!;
      await emptyStore(target, FILLED_SCOPES);
      const run = await ckpt(['copy', '--from', `from:${from}`, '--to', `to:${to}`, '--json']);
      expect(run.stderr).toBe('');
      expect(run.code).toBe(0);
      expect(JSON.parse(run.stdout)).toMatchObject({ sessions: 7, state: 6, skipped: 0 });
      expect(await storeReads(target)).toEqual(await storeReads(sources.get(from)!));
    },
    60_000,
  );
});
