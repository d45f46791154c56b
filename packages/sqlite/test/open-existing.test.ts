/** `create: false`: opening only a file that holds the namespace, and writing nothing to open it. */
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, isCkptError, kvBackend, openStore } from '@ckpt/core';
import { sqlite, sqliteKv } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-existing-'));
let n = 0;
const fresh = () => join(dir, `t${n++}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

function refusal(fn: () => unknown): Error & { code: string } {
  try {
    fn();
  } catch (err) {
    expect(isCkptError(err)).toBe(true);
    return err as Error & { code: string };
  }
  throw new Error('expected a CkptError');
}

/** A store written in `namespace` of `path`, closed again. */
async function written(path: string, namespace?: string): Promise<void> {
  const store = new CheckpointStore(sqlite({ path, namespace }));
  await store.checkpoint('s', { step: 1 });
  await store.close();
}

const digest = (path: string) => createHash('sha256').update(readFileSync(path)).digest('hex');
const tablesOf = (path: string) => {
  const db = new Database(path, { readonly: true });
  const names = db.prepare(`SELECT name FROM sqlite_schema ORDER BY name`).pluck().all();
  db.close();
  return names;
};

describe('sqlite({ path, create: false })', () => {
  it('refuses a file that does not exist with NOT_FOUND naming the path and namespace, and creates no file', () => {
    const path = fresh();
    const err = refusal(() => sqlite({ path, create: false }));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toBe(
      `there is no ckpt store in namespace 'ckpt' at ${JSON.stringify(path)} (the file does not exist); check the path and the namespace, or open it without { create: false } to create a new store there.`,
    );
    expect(existsSync(path)).toBe(false);
    expect(readdirSync(dir).filter((f) => f.startsWith(`t${n - 1}.`))).toEqual([]);
  });

  it('refuses a file in a directory that does not exist with NOT_FOUND, creating nothing', () => {
    const path = join(dir, 'no-such-dir', 'agent.db');
    expect(refusal(() => sqlite({ path, create: false })).code).toBe('NOT_FOUND');
    expect(existsSync(join(dir, 'no-such-dir'))).toBe(false);
  });

  it('refuses a namespace the file does not hold with NOT_FOUND, leaving the file byte for byte as it was', async () => {
    const path = fresh();
    await written(path, 'agents');
    const before = { bytes: digest(path), tables: tablesOf(path) };
    const err = refusal(() => sqlite({ path, namespace: 'agnets', create: false }));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toMatch(
      /^there is no ckpt store in namespace 'agnets' at .* \(it holds no ckpt tables\)/,
    );
    expect({ bytes: digest(path), tables: tablesOf(path) }).toEqual(before);
  });

  it('refuses an empty file with NOT_FOUND and leaves it empty', () => {
    const path = fresh();
    new Database(path).close();
    expect(refusal(() => sqlite({ path, create: false })).code).toBe('NOT_FOUND');
    expect(readFileSync(path).length).toBe(0);
  });

  it('opens a store that exists, to read and write it', async () => {
    const path = fresh();
    await written(path);
    const store = new CheckpointStore(sqlite({ path, create: false }));
    expect((await store.load('s'))?.data).toEqual({ step: 1 });
    await store.checkpoint('s', { step: 2 });
    expect(await store.head('s')).toBe(2);
    await store.close();
  });

  it("opens ':memory:' as a new, empty store, as memory() does", async () => {
    const store = new CheckpointStore(sqlite({ path: ':memory:', create: false }));
    expect(await store.load('s')).toBeNull();
    await store.close();
  });

  it('refuses create that is not a boolean with INVALID_ARGUMENT', () => {
    const err = refusal(() => sqlite({ path: fresh(), create: 'no' as never }));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toBe('sqlite() needs create to be true or false; got "no".');
  });

  it('holds sqliteKv to the same rule: a missing file is NOT_FOUND and stays missing', () => {
    const path = fresh();
    expect(refusal(() => sqliteKv({ path, create: false })).code).toBe('NOT_FOUND');
    expect(existsSync(path)).toBe(false);
  });

  it('opens the KV store of a file that has one', async () => {
    const path = fresh();
    const kv = sqliteKv({ path });
    await kv.set('k', 'v');
    await kv.close?.();
    const again = kvBackend(sqliteKv({ path, create: false }));
    await again.close();
    // The native store's tables are not there: the KV store's version alone is no native store.
    expect(refusal(() => sqlite({ path, create: false })).code).toBe('NOT_FOUND');
  });
});

describe("openStore('sqlite:…', { create: false })", () => {
  it('rejects a misspelt path with NOT_FOUND and creates no file', async () => {
    const path = fresh();
    const err = await openStore(`sqlite:${path}`, { create: false }).catch((e: unknown) => e);
    expect(isCkptError(err, 'NOT_FOUND')).toBe(true);
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
