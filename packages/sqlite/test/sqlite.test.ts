/** What is SQLite's alone: files, modes, schema versions, options and openStore. */
import {
  closeSync,
  existsSync,
  mkdtempSync,
  openSync,
  readdirSync,
  readFileSync,
  rmSync,
  statSync,
  writeFileSync,
  writeSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { expectOldSessionsReadWhole } from '@ckpt/contract-tests/servers';
import { CheckpointStore, isCkptError, kvBackend, openStore } from '@ckpt/core';
import { SCHEMA_VERSION, sqlite, sqliteKv } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import { versionOne } from './old-schemas.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-'));
let n = 0;
const fresh = () => join(dir, `t${n++}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

type Refusal = Error & { code: string; details: Record<string, unknown> };

function refusal(fn: () => unknown): Refusal {
  try {
    fn();
  } catch (err) {
    expect(isCkptError(err)).toBe(true);
    return err as Refusal;
  }
  throw new Error('expected a CkptError');
}

describe('files', () => {
  it('creates the database and its -wal and -shm files with mode 0600 under umask 022', async () => {
    const previous = process.umask(0o022);
    try {
      const path = fresh();
      const store = new CheckpointStore(sqlite({ path }));
      await store.checkpoint('s', 1);
      for (const file of [path, `${path}-wal`, `${path}-shm`]) {
        expect((statSync(file).mode & 0o777).toString(8), file).toBe('600');
      }
      await store.close();
    } finally {
      process.umask(previous);
    }
  });

  it('opens in WAL mode with synchronous FULL by default', () => {
    const backend = sqlite({ path: fresh() });
    expect(backend.db.pragma('journal_mode', { simple: true })).toBe('wal');
    expect(backend.db.pragma('synchronous', { simple: true })).toBe(2);
    expect(backend.db.pragma('busy_timeout', { simple: true })).toBeGreaterThan(0);
    backend.db.close();
  });

  it('relaxes synchronous when asked', () => {
    const backend = sqlite({ path: fresh(), synchronous: 'normal' });
    expect(backend.db.pragma('synchronous', { simple: true })).toBe(1);
    backend.db.close();
  });

  it('refuses an unknown synchronous level or a missing path with INVALID_ARGUMENT', () => {
    expect(refusal(() => sqlite({ path: fresh(), synchronous: 'sometimes' as never })).code).toBe(
      'INVALID_ARGUMENT',
    );
    expect(refusal(() => sqlite({} as never)).message).toMatch(/path/);
    expect(refusal(() => sqlite({ path: fresh(), namespace: 'Bad' })).code).toBe(
      'INVALID_ARGUMENT',
    );
    for (const namespace of ['sqlite', 'sqlite_agents']) {
      const err = refusal(() => sqlite({ path: ':memory:', namespace }));
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(/SQLite keeps for itself/);
    }
    const allowed = sqlite({ path: ':memory:', namespace: 'sqlitex' });
    expect(allowed.namespace).toBe('sqlitex');
    allowed.db.close();
    for (const synchronous of [2, true, null]) {
      const err = refusal(() => sqliteKv({ path: fresh(), synchronous: synchronous as never }));
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(/synchronous must be one of 'full'/);
    }
    // A misspelt option would otherwise leave synchronous at FULL, or the namespace at ckpt.
    for (const factory of [sqlite, sqliteKv]) {
      const path = fresh();
      const err = refusal(() => factory({ path, synchronus: 'off' } as never));
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(
        /^sqlite\(\) options has no option "synchronus"; the options are path, namespace/,
      );
      expect(existsSync(path)).toBe(false);
    }
  });

  it('refuses a path that cannot name a database file with INVALID_ARGUMENT saying why', () => {
    const notADatabase = fresh();
    writeFileSync(notADatabase, 'notes, not a database\n'.repeat(100));
    const cases = [
      [join(dir, 'missing', 'agent.db'), /directory does not exist; create the directory first/],
      [dir, /is a directory; name a file in it/],
      [join(notADatabase, 'agent.db'), /not a directory/],
      [notADatabase, /not a SQLite database/],
    ] as const;
    for (const [path, why] of cases) {
      for (const open of [sqlite, sqliteKv]) {
        const err = refusal(() => open({ path }));
        expect(err.code, path).toBe('INVALID_ARGUMENT');
        expect(err.details.argument).toBe('path');
        expect(err.message).toContain(JSON.stringify(path));
        expect(err.message).toMatch(why);
      }
    }
    expect(existsSync(join(dir, 'missing'))).toBe(false);
    expect(readFileSync(notADatabase, 'utf8')).toMatch(/^notes, not a database/);
  });

  it('reports a directory that exists but takes no new file as BACKEND, not as a missing directory', () => {
    // /proc exists and answers ENOENT to creating a file in it.
    const err = refusal(() => sqlite({ path: '/proc/agent.db' }));
    expect(err.code).toBe('BACKEND');
    expect(err.message).toMatch(/cannot open "\/proc\/agent.db": ENOENT/);
    expect(err.message).not.toMatch(/directory does not exist/);
  });

  it('reports any other failure to open the file as BACKEND with the cause', () => {
    const path = fresh();
    const db = new Database(path);
    db.exec('CREATE TABLE notes (text TEXT)');
    db.close();
    // Garbage over the schema page, past the 100-byte header that says "SQLite format 3".
    const fd = openSync(path, 'r+');
    writeSync(fd, Buffer.alloc(3000, 0xab), 0, 3000, 100);
    closeSync(fd);
    const err = refusal(() => sqlite({ path }));
    expect(err.code).toBe('BACKEND');
    expect(err.message).toMatch(/cannot open .*malformed/);
    expect((err.cause as { code?: string }).code).toBe('SQLITE_CORRUPT');
  });

  it('keeps what was written across close and reopen', async () => {
    const path = fresh();
    let store = new CheckpointStore(sqlite({ path }));
    await store.checkpoint('s', { kept: true }, { transcript: ['t'] });
    await store.close();
    store = new CheckpointStore(sqlite({ path }));
    expect((await store.load('s'))?.data).toEqual({ kept: true });
    await store.close();
  });

  it('lists checkpoints and sessions without reading a payload', async () => {
    const path = fresh();
    const backend = sqlite({ path });
    const store = new CheckpointStore(backend);
    for (let i = 0; i < 5; i++)
      await store.checkpoint('s', { big: 'x'.repeat(10_000) }, { metadata: { i } });
    // With every payload and transcript gone, the listings still answer in full.
    backend.db.exec('DELETE FROM ckpt_bodies; DELETE FROM ckpt_transcripts');
    expect((await store.list('s')).items.map((c) => c.metadata)).toEqual([
      { i: 4 },
      { i: 3 },
      { i: 2 },
      { i: 1 },
      { i: 0 },
    ]);
    expect((await store.sessions()).items[0]).toMatchObject({
      sessionId: 's',
      checkpoints: 5,
      metadata: { i: 4 },
    });
    expect(await store.history('s')).toEqual([1, 2, 3, 4, 5]);
    await store.close();
  });
});

describe('schema', () => {
  it('records its schema version and migrates idempotently', () => {
    const path = fresh();
    for (let i = 0; i < 3; i++) sqlite({ path }).db.close();
    const db = new Database(path);
    expect(
      db.prepare("SELECT value FROM ckpt_meta WHERE key = 'checkpoints_schema_version'").get(),
    ).toEqual({
      value: String(SCHEMA_VERSION),
    });
    db.close();
  });

  it('commits nothing when it opens a file whose schema is current', async () => {
    const path = fresh();
    sqlite({ path }).db.close();
    await sqliteKv({ path }).close?.();
    // PRAGMA data_version changes for a connection when another one commits to the file. (The
    // version row is written again, with the value it holds; SQLite leaves such a row as it is.)
    const watcher = new Database(path);
    const version = () => watcher.pragma('data_version', { simple: true });
    const before = version();
    sqlite({ path }).db.close();
    await sqliteKv({ path }).close?.();
    expect(version()).toBe(before);
    watcher.close();
  });

  it('upgrades a version 1 file in place, its sessions read back whole', async () => {
    const path = fresh();
    const old = versionOne(path);
    const store = await expectOldSessionsReadWhole(
      old,
      () => new CheckpointStore(sqlite({ path })),
    );
    old.close();
    const db = new Database(path);
    expect(
      db.prepare("SELECT value FROM ckpt_meta WHERE key = 'checkpoints_schema_version'").get(),
    ).toEqual({ value: String(SCHEMA_VERSION) });
    db.close();
    await store.close();
  });

  it('refuses a newer schema with SCHEMA, saying to upgrade', () => {
    const path = fresh();
    sqlite({ path }).db.close();
    const db = new Database(path);
    db.prepare("UPDATE ckpt_meta SET value = '99' WHERE key = 'checkpoints_schema_version'").run();
    db.close();
    const err = refusal(() => sqlite({ path }));
    expect(err.code).toBe('SCHEMA');
    expect(err.message).toMatch(/version 99.*upgrade @ckpt\/sqlite/);
  });

  it('refuses an unknown schema version with SCHEMA', () => {
    const path = fresh();
    sqlite({ path }).db.close();
    const db = new Database(path);
    db.prepare(
      "UPDATE ckpt_meta SET value = 'banana' WHERE key = 'checkpoints_schema_version'",
    ).run();
    db.close();
    expect(refusal(() => sqlite({ path })).code).toBe('SCHEMA');
  });

  it('refuses tables of the same names that ckpt did not create', () => {
    const path = fresh();
    const db = new Database(path);
    db.exec('CREATE TABLE ckpt_sessions (whatever TEXT)');
    db.close();
    const err = refusal(() => sqlite({ path }));
    expect(err.code).toBe('SCHEMA');
    expect(err.message).toMatch(/another namespace/);
  });

  it('keeps namespaces in one file apart, the KV store beside the native tables', async () => {
    const path = fresh();
    const a = new CheckpointStore(sqlite({ path, namespace: 'a' }));
    const b = new CheckpointStore(sqlite({ path, namespace: 'b' }));
    const kv = new CheckpointStore(kvBackend(sqliteKv({ path, namespace: 'a' })));
    await a.checkpoint('s', 'a');
    await b.checkpoint('s', 'b');
    await kv.checkpoint('s', 'kv');
    expect((await a.load('s'))?.data).toBe('a');
    expect((await b.load('s'))?.data).toBe('b');
    expect((await kv.load('s'))?.data).toBe('kv');
    await Promise.all([a.close(), b.close(), kv.close()]);
  });
});

describe('openStore', () => {
  it("opens 'sqlite:PATH' with a namespace, and 'sqlite::memory:'", async () => {
    const path = fresh();
    const store = await openStore(`sqlite:${path}?namespace=agents`);
    await store.checkpoint('s', 'hello');
    await store.close();
    const db = new Database(path);
    expect(db.prepare('SELECT count(*) AS n FROM agents_checkpoints').get()).toEqual({ n: 1 });
    db.close();
    const memory = await openStore('sqlite::memory:');
    await memory.checkpoint('s', 1);
    expect(await memory.head('s')).toBe(1);
    await memory.close();
  });

  it("takes 'synchronous' from the URL, and refuses any other parameter without creating a file", async () => {
    const path = fresh();
    const store = await openStore(`sqlite:${path}?synchronous=normal&namespace=agents`);
    expect((store.backend as ReturnType<typeof sqlite>).synchronous).toBe('normal');
    expect(
      (store.backend as ReturnType<typeof sqlite>).db.pragma('synchronous', { simple: true }),
    ).toBe(1);
    await store.close();

    const other = fresh();
    for (const url of [`sqlite:${other}?mode=ro`, `sqlite:${other}?synchronous=sometimes`]) {
      const err = await openStore(url).catch((e: unknown) => e);
      expect(isCkptError(err, 'INVALID_ARGUMENT'), url).toBe(true);
    }
    expect(existsSync(other)).toBe(false);
    expect(readdirSync(dir).some((name) => name.includes('?'))).toBe(false);
  });
});
