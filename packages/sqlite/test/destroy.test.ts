/** `destroy()` on SQLite: the namespace's tables go, the file and other namespaces stay. */
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, isCkptError } from '@ckpt/core';
import { sqlite, sqliteKv } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-destroy-'));
let n = 0;
const fresh = () => join(dir, `t${n++}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const tablesOf = (path: string) => {
  const db = new Database(path, { readonly: true });
  const names = db.prepare(`SELECT name FROM sqlite_schema ORDER BY name`).pluck().all();
  db.close();
  return names as string[];
};

describe('destroy() on sqlite', () => {
  it("drops every table of the namespace, the KV store's and the meta table included, and keeps the file", async () => {
    const path = fresh();
    const kv = sqliteKv({ path, namespace: 'agents' });
    await kv.set('k', 'v');
    await kv.close?.();
    const store = new CheckpointStore(sqlite({ path, namespace: 'agents' }));
    await store.checkpoint('s', 1, { transcript: ['t'], idempotencyKey: 'k' });
    await store.state('x').set('k', 1);
    expect(tablesOf(path).some((name) => name.startsWith('agents_'))).toBe(true);
    await store.destroy();
    expect(tablesOf(path)).toEqual([]);
    expect(existsSync(path)).toBe(true);
  });

  it('drops the tables of a store that wrote nothing, or only from another backend, on its own connection without starting a writer thread', async () => {
    const path = fresh();
    const writer = new CheckpointStore(sqlite({ path, namespace: 'agents' }));
    await writer.checkpoint('s', 1);
    await writer.close();
    const backend = sqlite({ path, namespace: 'agents' });
    const store = new CheckpointStore(backend);
    expect((await store.load('s'))?.data).toBe(1);
    await store.destroy();
    expect(backend.writer?.thread).toBeNull();
    expect(tablesOf(path)).toEqual([]);
  });

  it('leaves the tables of another namespace in the same file as they were', async () => {
    const path = fresh();
    const other = new CheckpointStore(sqlite({ path, namespace: 'others' }));
    await other.checkpoint('kept', { mine: true });
    const othersTables = tablesOf(path);
    const store = new CheckpointStore(sqlite({ path, namespace: 'agents' }));
    await store.checkpoint('s', 1);
    await store.destroy();
    expect(tablesOf(path)).toEqual(othersTables);
    expect((await other.load('kept'))?.data).toEqual({ mine: true });
    await other.close();
  });

  it('is NOT_FOUND afterwards for create: false, and a store opened the usual way starts empty', async () => {
    const path = fresh();
    const store = new CheckpointStore(sqlite({ path }));
    await store.checkpoint('s', 1);
    await store.destroy();
    let refused: unknown;
    try {
      sqlite({ path, create: false });
    } catch (err) {
      refused = err;
    }
    expect(isCkptError(refused, 'NOT_FOUND')).toBe(true);
    const again = new CheckpointStore(sqlite({ path }));
    expect(await again.load('s')).toBeNull();
    expect((await again.sessions()).items).toEqual([]);
    await again.close();
  });
});
