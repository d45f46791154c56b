/** `create: false`: opening only a file that holds the namespace, and writing nothing to open it. */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectCkptError } from '@ckpt/contract-tests';
import {
  type ExistingStoreStorage,
  expectExistingStoreOpens,
  expectMissingStoreNotFound,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore, kvBackend, openStore } from '@ckpt/core';
import { sqlite, sqliteKv } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-existing-'));
let n = 0;
const fresh = () => join(dir, `t${n++}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The files named after `path` (with -wal, -shm), and the tables of namespace `ns` in it. */
function contents(path: string, ns: string): string[] {
  const files = readdirSync(dir).filter((name) => join(dir, name).startsWith(path));
  if (!existsSync(path)) return files;
  const db = new Database(path, { readonly: true, fileMustExist: true });
  const tables = db
    .prepare(`SELECT name FROM sqlite_schema WHERE name LIKE ? ESCAPE '\\' ORDER BY name`)
    .pluck()
    .all(`${ns.replaceAll('_', '\\_')}\\_%`) as string[];
  db.close();
  return [...files, ...tables];
}

/** The backend (or the KV store, as a backend) on the file at `path`. */
const onFile = (path: string, kv = false): ExistingStoreStorage => ({
  open: (namespace, create) =>
    kv ? kvBackend(sqliteKv({ path, namespace, create })) : sqlite({ path, namespace, create }),
  contents: async (namespace) => contents(path, namespace),
});

/** A store written in `namespace` of `path`, closed again. */
async function written(path: string, namespace?: string): Promise<void> {
  const store = new CheckpointStore(sqlite({ path, namespace }));
  await store.checkpoint('s', { step: 1 });
  await store.close();
}

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');

describe('sqlite({ path, create: false })', () => {
  it('refuses a file that does not exist with NOT_FOUND naming the path and namespace, and creates no file', async () => {
    const path = fresh();
    const err = await expectMissingStoreNotFound(onFile(path), 'ckpt');
    expect(err.message).toBe(
      `there is no ckpt store in namespace 'ckpt' at ${JSON.stringify(path)} (the file does not exist); check the path and the namespace, or open it without { create: false } to create a new store there.`,
    );
    expect(contents(path, 'ckpt')).toEqual([]);
  });

  it('refuses a file in a directory that does not exist with NOT_FOUND, creating nothing', async () => {
    const path = join(dir, 'no-such-dir', 'agent.db');
    await expectMissingStoreNotFound(onFile(path), 'ckpt');
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
  });

  it('refuses a namespace the file does not hold with NOT_FOUND, leaving the file byte for byte as it was', async () => {
    const path = fresh();
    await written(path, 'agents');
    const before = digest(path);
    const err = await expectMissingStoreNotFound(onFile(path), 'agnets');
    expect(err.message).toMatch(
      /^there is no ckpt store in namespace 'agnets' at .* \(it holds no ckpt tables\); check the path and the namespace \(the file holds the namespace 'agents'\)/,
    );
    expect(digest(path)).toBe(before);
  });

  it('lists every namespace the file holds when it lacks the one asked for, or says it holds none', async () => {
    const path = fresh();
    await written(path, 'agents');
    await written(path, 'agents_2');
    const err = await expectMissingStoreNotFound(onFile(path), 'ckpt');
    expect(err.message).toContain(
      "check the path and the namespace (the file holds the namespaces 'agents', 'agents_2')",
    );
    const empty = fresh();
    new Database(empty).close();
    const none = await expectMissingStoreNotFound(onFile(empty), 'ckpt');
    expect(none.message).toContain('(the file holds no ckpt namespace)');
  });

  it('refuses an empty file with NOT_FOUND and leaves it empty', async () => {
    const path = fresh();
    new Database(path).close();
    await expectMissingStoreNotFound(onFile(path), 'ckpt');
    expect(readFileSync(path).length).toBe(0);
  });

  it('opens a store that exists, to read and write it', () =>
    expectExistingStoreOpens(onFile(fresh()), 'ckpt'));

  it("opens ':memory:' as a new, empty store, as memory() does", async () => {
    const store = new CheckpointStore(sqlite({ path: ':memory:', create: false }));
    expect(await store.load('s')).toBeNull();
    await store.close();
  });

  it('refuses create that is not a boolean with INVALID_ARGUMENT', async () => {
    const err = await expectCkptError(
      () => sqlite({ path: fresh(), create: 'no' as never }),
      'INVALID_ARGUMENT',
    );
    expect(err.message).toBe('sqlite() needs create to be true or false; got "no".');
  });

  it('holds sqliteKv to the same rule', async () => {
    await expectMissingStoreNotFound(onFile(fresh(), true), 'ckpt');
    await expectExistingStoreOpens(onFile(fresh(), true), 'ckpt');
  });

  it("does not take the KV store's tables for the native store's", async () => {
    const path = fresh();
    await expectExistingStoreOpens(onFile(path, true), 'ckpt');
    await expectMissingStoreNotFound(onFile(path), 'ckpt');
  });
});

describe("openStore('sqlite:…', { create: false })", () => {
  it('rejects a misspelt path with NOT_FOUND and creates no file', async () => {
    const path = fresh();
    await expectCkptError(openStore(`sqlite:${path}`, { create: false }), 'NOT_FOUND');
    expect(existsSync(path)).toBe(false);
  });

  it('opens a store that exists', async () => {
    const path = fresh();
    await written(path, 'agents');
    const store = await openStore(`sqlite:${path}?namespace=agents`, { create: false });
    expect(await store.head('s')).toBe(1);
    await store.close();
  });
});
