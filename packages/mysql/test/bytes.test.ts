/**
 * Values as bytes (schema version 8): what the LONGBLOB columns hold after every path a value
 * takes (prepared and as text, alone and in a batch, imported and rewritten), read through the
 * raw driver, and the upgrade of a version 7 namespace, whose values were text.
 */
import { createHash } from 'node:crypto';
import { CheckpointStore, compress, encrypt, type JsonValue, type StoreOptions } from '@ckpt/core';
import { storedBytesOf } from '@ckpt/core/adapter';
import { type MysqlBackend, mysql, SCHEMA_VERSION } from '@ckpt/mysql';
import mysql2, { type Pool } from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { tables } from '../src/schema.js';
import { copyRows, writeOldTables } from './old-schemas.js';
import {
  adminPool,
  available,
  dropAndClose,
  freshBackend,
  freshNamespace,
  url,
} from './support.js';

const KEY1 = createHash('sha256').update('first bytes key').digest();
const KEY2 = createHash('sha256').update('second bytes key').digest();
const sealedUnder = (current: 'k1' | 'k2'): StoreOptions => ({
  codecs: [compress('gzip', { minBytes: 16 }), encrypt({ keys: { k1: KEY1, k2: KEY2 }, current })],
});

/** A value with characters of every UTF-8 width, long enough that its encoded form is mostly payload. */
const VALUE = {
  text: 'ascii é ü 😀 '.repeat(100),
  items: Array.from({ length: 40 }, (_, i) => ({ i, role: i % 2 ? 'user' : 'agent' })),
};
const ITEMS = [
  { role: 'user', text: 'hello 😀' },
  { role: 'agent', text: 'hi' },
];

// Pools the tests open themselves; a backend never ends a pool it was given.
const opened: Pool[] = [];
afterAll(async () => {
  for (const pool of opened) await pool.end();
});

/** What a value column of namespace `ns` holds, through the raw driver (bytes: a Buffer). */
async function held(
  ns: string,
  at: { data: [string, number] } | { items: [string, number] } | { state: [string, string] },
): Promise<Buffer> {
  const t = tables(ns);
  const [sql, values] =
    'data' in at
      ? [`SELECT data AS v FROM ${t.bodies} WHERE session_id = ? AND seq = ?`, at.data]
      : 'items' in at
        ? [`SELECT items AS v FROM ${t.transcripts} WHERE session_id = ? AND seq = ?`, at.items]
        : [`SELECT value AS v FROM ${t.state} WHERE scope = ? AND k = ?`, at.state];
  const [rows] = (await adminPool().query(sql, values)) as unknown as [{ v: unknown }[]];
  expect(Buffer.isBuffer(rows[0]?.v)).toBe(true);
  return rows[0]!.v as Buffer;
}

/**
 * That `bytes` is what `text` (a value as core handed it) is stored as: an encoded value as a
 * `ckpt1b;` header and then its bytes, 3/4 of its base64 text; any other value as its UTF-8.
 */
function expectStoredAsBytes(bytes: Buffer, text: string, encoded: boolean): void {
  expect(bytes.equals(storedBytesOf(text))).toBe(true);
  if (encoded) {
    expect(text.startsWith('ckpt1;')).toBe(true);
    expect(bytes.subarray(0, 7).toString('latin1')).toBe('ckpt1b;');
    const headerEnd = text.lastIndexOf(';') + 1;
    const base64 = text.length - headerEnd;
    // `ckpt1b;` is one byte longer than `ckpt1;`; base64 pads to a multiple of 4.
    const payload = bytes.length - headerEnd - 1;
    expect(payload).toBeLessThanOrEqual(0.75 * base64);
    expect(payload).toBeGreaterThan(0.75 * base64 - 3);
  } else {
    expect(bytes.equals(Buffer.from(text, 'utf8'))).toBe(true);
  }
}

/** The transcript items of `sessionId`, oldest first (a transcript pages newest first). */
async function itemsOf(store: CheckpointStore, sessionId: string): Promise<JsonValue[]> {
  return (await store.transcript(sessionId)).items.map((entry) => entry.item).reverse();
}

/** Every checkpoint value of `sessionId`, as the backend hands them to core (text). */
async function storedTexts(backend: MysqlBackend, sessionId: string) {
  return backend.exportCheckpoints(sessionId, { afterSeq: null, limit: 1000 });
}

/** That every data and transcript value of `sessionId` is held as the bytes of its text. */
async function expectSessionAsBytes(backend: MysqlBackend, sessionId: string, encoded: boolean) {
  const checkpoints = await storedTexts(backend, sessionId);
  expect(checkpoints.length).toBeGreaterThan(0);
  for (const cp of checkpoints) {
    const at: [string, number] = [sessionId, cp.seq];
    expectStoredAsBytes(await held(backend.namespace, { data: at }), cp.data, encoded);
    expectStoredAsBytes(await held(backend.namespace, { items: at }), cp.transcript, encoded);
  }
}

describe.skipIf(!available)('mysql values as bytes', () => {
  it.each([true, false])(
    'stores data, transcript items and state values as bytes on every write (preparedStatements: %s)',
    async (preparedStatements) => {
      const backend = mysql({ url, namespace: freshNamespace(), preparedStatements });
      const sealed = new CheckpointStore(backend, sealedUnder('k1'));
      const plain = new CheckpointStore(backend);
      for (const store of [sealed, plain]) {
        const id = store === sealed ? 'sealed' : 'plain';
        await store.checkpoint(id, VALUE, { transcript: ITEMS });
        await store.checkpoint(id, { ...VALUE, second: true }, { transcript: ITEMS.slice(1) });
        await store.state('scope').set(id, VALUE);
        // update() writes through compare-and-set: an insert, then a replace of what it read.
        await store.state('scope').update(`${id}-count`, (n) => Number(n ?? 0) + 1);
        await store.state('scope').update(`${id}-count`, (n) => Number(n ?? 0) + 1);
      }
      // An import of two checkpoints: its rows go as one multi-row INSERT, sent as text.
      const exported = (await sealed.exportSession('sealed'))!;
      await sealed.importSession({ ...exported, sessionId: 'imported' });

      await expectSessionAsBytes(backend, 'sealed', true);
      await expectSessionAsBytes(backend, 'imported', true);
      await expectSessionAsBytes(backend, 'plain', false);
      for (const key of ['sealed', 'sealed-count', 'plain', 'plain-count']) {
        const text = (await backend.stateGet('scope', key))!;
        const bytes = await held(backend.namespace, { state: ['scope', key] });
        expectStoredAsBytes(bytes, text, key.startsWith('sealed'));
      }
      expect(await sealed.state('scope').get('sealed-count')).toBe(2);
      expect(await plain.state('scope').get('plain-count')).toBe(2);
      for (const id of ['sealed', 'imported']) {
        expect((await sealed.load(id))?.data).toEqual({ ...VALUE, second: true });
        expect((await sealed.load(id, 1))?.data).toEqual(VALUE);
        expect(await itemsOf(sealed, id)).toEqual([...ITEMS, ...ITEMS.slice(1)]);
      }

      // A rewrite compares the bytes held with those of the values read, and writes bytes.
      const resealed = new CheckpointStore(backend, sealedUnder('k2'));
      expect(await resealed.reencode()).toEqual({ checkpoints: 6, state: 4 });
      expect(await resealed.reencode()).toEqual({ checkpoints: 0, state: 0 });
      for (const id of ['sealed', 'imported', 'plain']) {
        await expectSessionAsBytes(backend, id, true);
        expect((await resealed.load(id, 1))?.data).toEqual(VALUE);
      }
      expect(await resealed.state('scope').get('plain')).toEqual(VALUE);
      await dropAndClose(backend);
    },
  );

  it.each([true, false])(
    'carries the bytes of every call of a group-committed batch (preparedStatements: %s)',
    async (preparedStatements) => {
      const pool = mysql2.createPool({ uri: url, connectionLimit: 1 });
      opened.push(pool);
      const backend = mysql({
        pool,
        namespace: freshNamespace(),
        groupCommit: true,
        preparedStatements,
      });
      const store = new CheckpointStore(backend, sealedUnder('k1'));
      const ids = Array.from({ length: 24 }, (_, i) => `s${i}`);
      await Promise.all(
        ids.map((id, i) =>
          store.checkpoint(id, { ...VALUE, i }, { transcript: i % 3 ? ITEMS.slice(i % 2) : [] }),
        ),
      );
      // Calls went together: more calls than batches.
      expect(backend.batched.batches).toBeGreaterThan(0);
      expect(backend.batched.calls).toBeGreaterThan(backend.batched.batches);
      for (const [i, id] of ids.entries()) {
        expect((await store.load(id))?.data).toEqual({ ...VALUE, i });
        const [cp] = await storedTexts(backend, id);
        expectStoredAsBytes(await held(backend.namespace, { data: [id, 1] }), cp!.data, true);
        expect(await itemsOf(store, id)).toEqual(i % 3 ? ITEMS.slice(i % 2) : []);
      }
      await dropAndClose(backend);
    },
  );
});

/**
 * Values a version 7 namespace may hold that are not what a store writes: each must become
 * exactly the bytes storedBytesOf gives it, so that a compare of what is read finds it.
 */
const ODD_TEXTS = [
  '"plain"',
  '{"a":"é 😀"}',
  'ckpt1;gzip;;QUJD',
  'ckpt1;a;b',
  'ckpt1;a;b;',
  'ckpt1;;;',
  'ckpt1;a;b;QQ',
  'ckpt1;a;b;QQ==',
  'ckpt1;a;b;QR==',
  'ckpt1;a;b;!!!!',
  'ckpt1;a;b;QUJD\n',
  'ckpt1;a;b;c;QUJD',
  'ckpt1;é;b;QUJD',
  'ckpt1;a\tb;c;QUJD',
  'ckpt1;~ :<;b;QUJD',
  `ckpt1;a;b;${Buffer.alloc(200, 7).toString('base64')}`,
  `ckpt1;a;b;${Buffer.alloc(200, 7)
    .toString('base64')
    .replace(/(.{76})/g, '$1\n')}`,
  'xckpt1;a;b;QUJD',
];

describe.skipIf(!available)('mysql upgrade from version 7 (values as text)', () => {
  it('reads back every value exactly, stores new ones as bytes, and reencodes the mixed store', async () => {
    const admin = adminPool();
    // What a version 7 store holds: the text core handed it, which this version's reads give
    // back. A store of this version writes it; its rows are copied into version 7's tables.
    const source = mysql({ url, namespace: freshNamespace() });
    const sealedSource = new CheckpointStore(source, sealedUnder('k1'));
    const plainSource = new CheckpointStore(source);
    await sealedSource.checkpoint('sealed', VALUE, { transcript: ITEMS });
    await sealedSource.checkpoint('sealed', { ...VALUE, n: 2 }, { transcript: ITEMS, needs: [1] });
    await sealedSource.pin('sealed', 1, { note: 'kept' });
    await plainSource.checkpoint('plain', VALUE, { transcript: ITEMS });
    await sealedSource.state('scope').set('sealed', VALUE);
    await plainSource.state('scope').set('plain', VALUE);

    const ns = freshNamespace();
    const t = tables(ns);
    const from = tables(source.namespace);
    await writeOldTables(admin, ns, 7);
    for (const table of ['sessions', 'checkpoints', 'idempotency', 'needs', 'pins'] as const) {
      await copyRows(admin, from[table], t[table]);
    }
    for (const id of ['sealed', 'plain']) {
      for (const cp of await storedTexts(source, id)) {
        await admin.execute(`INSERT INTO ${t.bodies} VALUES (?, ?, ?)`, [id, cp.seq, cp.data]);
        await admin.execute(`INSERT INTO ${t.transcripts} VALUES (?, ?, ?)`, [
          id,
          cp.seq,
          cp.transcript,
        ]);
      }
    }
    for (const key of ['sealed', 'plain']) {
      const text = (await source.stateGet('scope', key))!;
      await admin.execute(`INSERT INTO ${t.state} VALUES ('scope', ?, ?)`, [key, text]);
    }
    // A session and state whose values are odd texts, read by the backend alone.
    for (const [i, text] of ODD_TEXTS.entries()) {
      await admin.execute(`INSERT INTO ${t.checkpoints} VALUES ('odd', ?, NULL, 1, '{}')`, [i + 1]);
      await admin.execute(`INSERT INTO ${t.bodies} VALUES ('odd', ?, ?)`, [i + 1, text]);
      await admin.execute(`INSERT INTO ${t.state} VALUES ('odd', ?, ?)`, [String(i), text]);
    }
    await admin.execute(
      `INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, metadata, created_at, updated_at,
                                  head_parent, head_created_at)
       VALUES ('odd', ?, ?, ?, '{}', 1, 1, NULL, 1)`,
      [ODD_TEXTS.length, ODD_TEXTS.length, ODD_TEXTS.length],
    );

    const backend = mysql({ url, namespace: ns });
    const sealed = new CheckpointStore(backend, sealedUnder('k1'));
    await backend.ready();
    const [upgraded] = (await admin.query(`SELECT value FROM ${t.meta}`)) as unknown as [unknown[]];
    expect(upgraded).toEqual([{ value: String(SCHEMA_VERSION) }]);

    // Every value reads back as it was, and is held as the bytes this version writes.
    for (const id of ['sealed', 'plain']) {
      expect(await storedTexts(backend, id)).toEqual(await storedTexts(source, id));
      await expectSessionAsBytes(backend, id, id === 'sealed');
      expect(await sealed.load(id)).toEqual(
        await (id === 'sealed' ? sealedSource : plainSource).load(id),
      );
      expect(await sealed.transcript(id)).toEqual(await sealedSource.transcript(id));
    }
    expect((await sealed.list('sealed')).items.map((c) => [c.seq, c.pinned])).toEqual([
      [2, false],
      [1, true],
    ]);
    for (const key of ['sealed', 'plain']) {
      const text = (await backend.stateGet('scope', key))!;
      expect(text).toBe(await source.stateGet('scope', key));
      expectStoredAsBytes(await held(ns, { state: ['scope', key] }), text, key === 'sealed');
      expect(await sealed.state('scope').get(key)).toEqual(VALUE);
    }
    for (const [i, text] of ODD_TEXTS.entries()) {
      expect((await backend.load('odd', i + 1))?.data).toBe(text);
      expect((await held(ns, { data: ['odd', i + 1] })).equals(storedBytesOf(text))).toBe(true);
      expect(await backend.stateGet('odd', String(i))).toBe(text);
      expect(await backend.stateCompareAndSet('odd', String(i), text, '"set"')).toBe(true);
    }
    expect(await backend.delete('odd')).toBe(true);
    for (const [i] of ODD_TEXTS.entries()) await backend.stateDelete('odd', String(i));

    // New values land as bytes, beside the upgraded ones.
    const next = await sealed.checkpoint('sealed', { ...VALUE, n: 3 }, { transcript: ITEMS });
    const [cp3] = await backend.exportCheckpoints('sealed', { afterSeq: 2, limit: 1 });
    expectStoredAsBytes(await held(ns, { data: ['sealed', next.seq] }), cp3!.data, true);
    await sealed.state('scope').update('sealed', (v) => ({ ...(v as object), n: 1 }) as JsonValue);
    expect(await sealed.state('scope').get('sealed')).toEqual({ ...VALUE, n: 1 });

    // reencode() over upgraded and new values, sealed and plain.
    const resealed = new CheckpointStore(backend, sealedUnder('k2'));
    expect(await resealed.reencode()).toEqual({ checkpoints: 4, state: 2 });
    expect(await resealed.reencode()).toEqual({ checkpoints: 0, state: 0 });
    expect((await resealed.load('sealed', 1))?.data).toEqual(VALUE);
    expect((await resealed.load('plain'))?.data).toEqual(VALUE);
    expect(await resealed.state('scope').get('plain')).toEqual(VALUE);
    await expectSessionAsBytes(backend, 'plain', true);

    await dropAndClose(backend);
    await dropAndClose(source);
  }, 60_000);

  it.each([true, false])(
    'compares values, not forms: update() and reencode() match what a process of version 7 still running writes after the upgrade (preparedStatements: %s)',
    async (preparedStatements) => {
      const admin = adminPool();
      const source = await freshBackend();
      const sealedSource = new CheckpointStore(source, sealedUnder('k1'));
      await sealedSource.checkpoint('sealed', VALUE, { transcript: ITEMS });
      await sealedSource.state('scope').set('sealed', VALUE);
      const [cp] = await storedTexts(source, 'sealed');
      const stateText = (await source.stateGet('scope', 'sealed'))!;

      const ns = freshNamespace();
      const t = tables(ns);
      await writeOldTables(admin, ns, 7);
      const backend = mysql({ url, namespace: ns, preparedStatements });
      await backend.ready();
      // Version 7's calls, each value sent as its text, which a LONGBLOB holds as its UTF-8.
      await admin.execute(`CALL ${ns}_append(?, ?, ?, ?, 0, NULL, NULL, ?, '[]')`, [
        'sealed',
        cp!.data,
        cp!.metadata,
        cp!.transcript,
        cp!.createdAt,
      ]);
      await admin.execute(
        `INSERT INTO ${t.state} (scope, k, value) VALUES ('scope', 'sealed', ?)
           ON DUPLICATE KEY UPDATE value = VALUES(value)`,
        [stateText],
      );
      expect(await held(ns, { state: ['scope', 'sealed'] })).toEqual(Buffer.from(stateText));
      expect(await held(ns, { data: ['sealed', 1] })).toEqual(Buffer.from(cp!.data));

      const sealed = new CheckpointStore(backend, sealedUnder('k1'));
      await sealed
        .state('scope')
        .update('sealed', (v) => ({ ...(v as object), n: 1 }) as JsonValue);
      const resealed = new CheckpointStore(backend, sealedUnder('k2'));
      expect(await resealed.reencode()).toEqual({ checkpoints: 1, state: 1 });
      for (const at of [
        { data: ['sealed', 1] },
        { items: ['sealed', 1] },
        { state: ['scope', 'sealed'] },
      ] as const) {
        const bytes = await held(ns, at as Parameters<typeof held>[1]);
        expect(bytes.subarray(0, 7).toString('latin1')).toBe('ckpt1b;');
        expect(bytes.toString('latin1').split(';')[1]).toMatch(/(^|,)aes-256-gcm:k2$/);
      }
      expect((await resealed.load('sealed'))?.data).toEqual(VALUE);
      expect(await resealed.transcript('sealed')).toEqual(await sealedSource.transcript('sealed'));
      expect(await resealed.state('scope').get('sealed')).toEqual({ ...VALUE, n: 1 });
      await dropAndClose(backend);
      await dropAndClose(source);
    },
    60_000,
  );
});
