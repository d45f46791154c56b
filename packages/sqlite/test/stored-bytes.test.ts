/**
 * Values as bytes (schema version 4): what the columns hold, read through the raw driver, on
 * both connections that write; and the upgrade of a version 3 file, whose values are text.
 */
import { createHash, randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeReads } from '@ckpt/contract-tests';
import {
  CheckpointStore,
  compress,
  encrypt,
  isCkptError,
  kvBackend,
  type StoreOptions,
} from '@ckpt/core';
import { type ImportInput, storedBytesOf } from '@ckpt/core/adapter';
import { sqlite, sqliteKv } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import { afterAll, describe, expect, it } from 'vitest';
import type { SqliteBackend } from '../src/backend.js';
import { migrateFile } from '../src/migrate.js';
import { checkpointMigrations, SCHEMA_VERSION } from '../src/schema.js';
import { versionThree } from './old-schemas.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-bytes-'));
let files = 0;
const fresh = () => join(dir, `${files++}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const KEY1 = createHash('sha256').update('first key').digest();
const KEY2 = createHash('sha256').update('second key').digest();
const sealedWith = (current: string, keys: Record<string, Uint8Array>): StoreOptions => ({
  codecs: [compress('gzip', { minBytes: 16 }), encrypt({ keys, current })],
});
const SEALED = sealedWith('k1', { k1: KEY1 });

/** A value gzip leaves a few KiB of, so that the payload outweighs the header around it. */
const bulky = () => ({ notes: randomBytes(3000).toString('hex'), é: 'ü 😀' });

/** A checkpoint's data and transcript items, and a state value, as the file holds them. */
function raw(db: Database.Database, sessionId: string, seq: number) {
  const row = db
    .prepare(`
      SELECT b.data, typeof(b.data) AS dataType, x.items, typeof(x.items) AS itemsType
        FROM ckpt_checkpoints c JOIN ckpt_bodies b ON b.id = c.body
        LEFT JOIN ckpt_transcripts x ON x.id = c.transcript
       WHERE c.session_id = ? AND c.seq = ?`)
    .get(sessionId, seq) as {
    data: unknown;
    dataType: string;
    items: unknown;
    itemsType: string;
  };
  return row;
}

function rawState(db: Database.Database, scope: string, key: string) {
  return db
    .prepare('SELECT value, typeof(value) AS type FROM ckpt_state WHERE scope = ? AND key = ?')
    .get(scope, key) as { value: unknown; type: string };
}

/** Every value of the file's value columns, in order, and the type SQLite gives each. */
function heldValues(db: Database.Database): { value: unknown; type: string }[] {
  return db
    .prepare(`
      SELECT * FROM (SELECT data AS value, typeof(data) AS type FROM ckpt_bodies ORDER BY id)
      UNION ALL SELECT * FROM (SELECT items, typeof(items) FROM ckpt_transcripts ORDER BY id)
      UNION ALL SELECT * FROM (SELECT value, typeof(value) FROM ckpt_state ORDER BY scope, key)`)
    .all() as { value: unknown; type: string }[];
}

const typesHeld = (db: Database.Database) => new Set(heldValues(db).map((held) => held.type));

const startsWith = (bytes: unknown, text: string) =>
  Buffer.isBuffer(bytes) && bytes.subarray(0, text.length).toString('latin1') === text;

// On the writer thread (the default), and on the event loop's connection.
for (const worker of [true, false]) {
  describe(`values as bytes (worker: ${worker})`, () => {
    it('stores an encoded value as ckpt1b; and its bytes, not their base64: about 3/4 of its text', async () => {
      const backend = sqlite({ path: fresh(), worker });
      const store = new CheckpointStore(backend, SEALED);
      // Called at once, so that with the writer thread they commit on it (a call alone commits
      // on the event loop's connection).
      await Promise.all([
        store.checkpoint('s', bulky(), { transcript: [bulky()] }),
        store.state('prefs').set('user', bulky()),
      ]);
      if (worker) expect(backend.writer?.thread).not.toBeNull();

      const row = raw(backend.db, 's', 1);
      const state = rawState(backend.db, 'prefs', 'user');
      // The texts core handed over, as the backend gives them back.
      const [entry] = await backend.lineage('s', { fromSeq: null, limit: 1, transcript: true });
      const texts = [
        (await backend.load('s', 1))!.data,
        entry!.transcript!,
        (await backend.stateGet('prefs', 'user'))!,
      ];
      const held = [row.data, row.items, state.value];
      expect([row.dataType, row.itemsType, state.type]).toEqual(['blob', 'blob', 'blob']);
      for (const [i, bytes] of held.entries()) {
        expect(texts[i]!.startsWith('ckpt1;gzip,aes-256-gcm:k1;')).toBe(true);
        expect(startsWith(bytes, 'ckpt1b;gzip,aes-256-gcm:k1;')).toBe(true);
        expect((bytes as Buffer).length / texts[i]!.length).toBeCloseTo(0.75, 1);
      }
      await store.close();
    });

    it('stores a plain value as the UTF-8 bytes of its JSON', async () => {
      const backend = sqlite({ path: fresh(), worker });
      const store = new CheckpointStore(backend);
      const data = { plain: 'é ü 😀', n: [1, 2] };
      await store.checkpoint('s', data, { transcript: ['item'] });
      await store.state('prefs').set('user', data);
      const row = raw(backend.db, 's', 1);
      expect(row.data).toEqual(Buffer.from(JSON.stringify(data), 'utf8'));
      expect(row.items).toEqual(Buffer.from('["item"]', 'utf8'));
      expect(rawState(backend.db, 'prefs', 'user')).toEqual({
        value: Buffer.from(JSON.stringify(data), 'utf8'),
        type: 'blob',
      });
      await store.close();
    });

    it('stores bytes through every write: fork copies, imports, rewrites and compare-and-sets', async () => {
      const backend = sqlite({ path: fresh(), worker });
      const store = new CheckpointStore(backend, SEALED);
      await store.checkpoint('s', bulky(), { transcript: ['one'] });
      await store.checkpoint('s', bulky(), { transcript: ['two'] });
      await store.fork('s', { atSeq: 1, newId: 'fork' });
      const exported = (await store.exportSession('s'))!;
      await store.importSession({ ...exported, sessionId: 'imported' });
      const state = store.state('counters');
      expect(await state.setIfAbsent('n', 1)).toBe(true);
      await state.update('n', (n) => (n as number) + 1);
      // A new current key: reencode() rewrites every value, comparing the bytes it read.
      const rotated = new CheckpointStore(backend, sealedWith('k2', { k1: KEY1, k2: KEY2 }));
      expect(await rotated.reencode()).toEqual({ checkpoints: 5, state: 1 });
      expect(await rotated.state('counters').get('n')).toBe(2);
      expect(typesHeld(backend.db)).toEqual(new Set(['blob']));
      expect(raw(backend.db, 'imported', 2).data).toSatisfy((bytes) =>
        startsWith(bytes, 'ckpt1b;gzip,aes-256-gcm:k2;'),
      );
      await store.close();
    });
  });
}

it("keeps the KV store's table text", async () => {
  const path = fresh();
  const store = new CheckpointStore(kvBackend(sqliteKv({ path })), SEALED);
  await store.checkpoint('s', bulky());
  await store.close();
  const db = new Database(path, { readonly: true });
  const types = db.prepare('SELECT DISTINCT typeof(value) AS type FROM ckpt_kv').all();
  expect(types).toEqual([{ type: 'text' }]);
  db.close();
});

describe('the upgrade from version 3, whose values are text', () => {
  /** Sessions and state written by stores with and without codecs, on an in-memory backend. */
  async function written() {
    const backend = sqlite({ path: ':memory:' });
    const plain = new CheckpointStore(backend);
    const sealed = new CheckpointStore(backend, SEALED);
    for (const [name, store] of [
      ['plain', plain],
      ['sealed', sealed],
    ] as const) {
      for (let i = 1; i <= 3; i++) {
        await store.checkpoint(name, { i, ...bulky() }, { transcript: [`${name} ${i}`, { i }] });
      }
      await store.checkpoint(name, { i: 4 }, { metadata: { last: true } });
      await store.fork(name, { atSeq: 2, newId: `${name}-fork` });
      await store.state('prefs').set(name, { name, ...bulky() });
    }
    return { backend, sealed };
  }

  /** `backend`'s sessions and state, written into a new version 3 file as text. */
  async function versionThreeCopy(backend: SqliteBackend): Promise<string> {
    const path = fresh();
    const old = versionThree(path);
    for (const { sessionId } of await backend.sessions({ after: null, limit: 100, prefix: '' })) {
      const session = (await backend.session(sessionId))!;
      const checkpoints = await backend.exportCheckpoints(sessionId, {
        afterSeq: null,
        limit: 100,
      });
      const input: ImportInput = { ...session, checkpoints, replace: false };
      old.session(input);
    }
    for (const key of ['plain', 'sealed']) {
      old.state('prefs', key, (await backend.stateGet('prefs', key))!);
    }
    old.close();
    return path;
  }

  it('reads every value back exactly, holds each as the bytes a write stores now, and writes bytes', async () => {
    const { backend, sealed } = await written();
    const path = await versionThreeCopy(backend);
    const before = new Database(path, { readonly: true });
    const texts = heldValues(before).map((held) => held.value as string);
    expect(typesHeld(before)).toEqual(new Set(['text']));
    before.close();
    // Plain and encoded values of each kind, data, transcript items and state.
    expect(texts.filter((text) => text.startsWith('ckpt1;')).length).toBeGreaterThan(6);
    expect(texts.filter((text) => !text.startsWith('ckpt1;')).length).toBeGreaterThan(6);

    const upgraded = sqlite({ path });
    const store = new CheckpointStore(upgraded, SEALED);
    expect(await storeReads(store)).toEqual(await storeReads(sealed));
    // Each row now holds what a write of its text stores.
    expect(heldValues(upgraded.db)).toEqual(
      texts.map((text) => ({ value: storedBytesOf(text), type: 'blob' })),
    );

    await store.checkpoint('sealed', bulky(), { transcript: ['after'] });
    expect(startsWith(raw(upgraded.db, 'sealed', 5).data, 'ckpt1b;')).toBe(true);
    expect(raw(upgraded.db, 'sealed', 5).dataType).toBe('blob');
    await store.close();
    await sealed.close();
  });

  it('runs compare-and-sets and reencode() over the values written before', async () => {
    const { backend, sealed } = await written();
    const path = await versionThreeCopy(backend);
    const upgraded = sqlite({ path });
    const store = new CheckpointStore(upgraded, SEALED);
    // A compare-and-set compares the bytes of the value it read with the converted row.
    await store.state('prefs').update('sealed', (value) => ({ ...(value as object), n: 1 }));
    expect(await store.state('prefs').get('sealed')).toMatchObject({ name: 'sealed', n: 1 });
    await store.update('plain', (cp) => ({ after: cp?.seq ?? null }));
    await store.checkpoint('sealed', { after: true }, { transcript: ['new'] });
    const expected = await storeReads(store);

    const rotated = new CheckpointStore(upgraded, sealedWith('k2', { k1: KEY1, k2: KEY2 }));
    // Every checkpoint (the plain ones too, which the codecs now seal) and both state values.
    const checkpoints = (await rotated.sessions()).items.reduce((n, s) => n + s.checkpoints, 0);
    expect(await rotated.reencode()).toEqual({ checkpoints, state: 2 });
    const onlyK2 = new CheckpointStore(upgraded, sealedWith('k2', { k2: KEY2 }));
    expect(await storeReads(onlyK2)).toEqual(expected);
    await store.close();
    await sealed.close();
  });

  it('compares values, not forms: a process of version 3 still running writes text after the upgrade, and update() and reencode() match it', async () => {
    const { backend, sealed } = await written();
    const path = fresh();
    // Opened before the upgrade, as a process of version 3 would have: it goes on writing.
    const old = versionThree(path);
    const upgraded = sqlite({ path });
    const store = new CheckpointStore(upgraded, SEALED);
    const sessions = await backend.sessions({ after: null, limit: 100, prefix: '' });
    for (const { sessionId } of sessions) {
      const session = (await backend.session(sessionId))!;
      const checkpoints = await backend.exportCheckpoints(sessionId, {
        afterSeq: null,
        limit: 100,
      });
      old.session({ ...session, checkpoints, replace: false });
    }
    for (const key of ['plain', 'sealed']) {
      old.state('prefs', key, (await backend.stateGet('prefs', key))!);
    }
    old.close();
    expect(typesHeld(upgraded.db)).toEqual(new Set(['text']));

    for (const key of ['plain', 'sealed']) {
      await store.state('prefs').update(key, (value) => ({ ...(value as object), n: 1 }));
      expect(await store.state('prefs').get(key)).toMatchObject({ name: key, n: 1 });
    }
    const expected = await storeReads(store);
    const rotated = new CheckpointStore(upgraded, sealedWith('k2', { k1: KEY1, k2: KEY2 }));
    const checkpoints = sessions.reduce((n, s) => n + s.checkpoints, 0);
    expect(await rotated.reencode()).toEqual({ checkpoints, state: 2 });
    expect(typesHeld(upgraded.db)).toEqual(new Set(['blob']));
    const onlyK2 = new CheckpointStore(upgraded, sealedWith('k2', { k2: KEY2 }));
    expect(await storeReads(onlyK2)).toEqual(expected);
    await store.close();
    await sealed.close();
  });

  it('is refused by a process of version 3, whose steps end before it', () => {
    const path = fresh();
    sqlite({ path }).db.close();
    const db = new Database(path);
    try {
      migrateFile(
        db,
        'ckpt',
        'checkpoints_schema_version',
        checkpointMigrations('ckpt').slice(0, 3),
        undefined,
      );
      expect.unreachable(`version 3 opened a version ${SCHEMA_VERSION} file`);
    } catch (err) {
      expect(isCkptError(err, 'SCHEMA')).toBe(true);
      expect((err as Error).message).toMatch(
        new RegExp(`version ${SCHEMA_VERSION}.*upgrade @ckpt/sqlite`),
      );
    } finally {
      db.close();
    }
  });
});
