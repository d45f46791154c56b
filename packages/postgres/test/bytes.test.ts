/**
 * Values as bytes (schema version 7): data, transcript items and state values are bytea, an
 * encoded value held as raw bytes after its header rather than as base64; and the upgrade from
 * version 6, whose columns held text.
 */
import { randomBytes } from 'node:crypto';
import { CheckpointStore, compress, encrypt, type StoreOptions } from '@ckpt/core';
import { storedBytesOf, textFromStoredBytes } from '@ckpt/core/adapter';
import { type PostgresBackend, postgres, SCHEMA_VERSION } from '@ckpt/postgres';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ODD_TEXTS } from './odd-texts.js';
import { writeOldSchema } from './old-schemas.js';
import { adminPool, available, namespaceToDrop, url } from './support.js';

const KEYS = { k1: Buffer.alloc(32, 1), k2: Buffer.alloc(32, 2) };
const gzipOnly: StoreOptions = { codecs: [compress('gzip', { minBytes: 1 })] };
const sealedWith = (current: keyof typeof KEYS): StoreOptions => ({
  codecs: [compress('gzip', { minBytes: 1 }), encrypt({ keys: KEYS, current })],
});

/** Text that gzip keeps long, so that the payload, not the header, makes up the stored value. */
const bulky = (n: number) => ({ n, noise: randomBytes(2048).toString('hex'), note: 'é 😀' });

// Each store runs on a pool of two connections of its own, ended after the test.
const pools: pg.Pool[] = [];
const stores: CheckpointStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const pool of pools.splice(0)) await pool.end();
});

function storeOn(namespace: string, options: StoreOptions = {}): CheckpointStore {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  pools.push(pool);
  const store = new CheckpointStore(postgres({ pool, namespace }), options);
  stores.push(store);
  return store;
}

const backendOf = (store: CheckpointStore) => store.backend as PostgresBackend;

/** Every value row of `namespace` as the server holds it, by table, session or scope, and key. */
async function rawValues(namespace: string): Promise<Map<string, Buffer | string>> {
  const { rows } = await adminPool().query<{ at: string; value: Buffer | string }>(
    `SELECT 'bodies/' || session_id || '/' || seq AS at, data AS value FROM "${namespace}".bodies
     UNION ALL
     SELECT 'transcripts/' || session_id || '/' || seq, items FROM "${namespace}".transcripts
     UNION ALL
     SELECT 'state/' || scope || '/' || key, value FROM "${namespace}".state`,
  );
  return new Map(rows.map((row) => [row.at, row.value]));
}

/** The type of each value column of `namespace`, and of the KV table's. */
async function valueColumnTypes(namespace: string): Promise<Record<string, string>> {
  const { rows } = await adminPool().query<{ table_name: string; data_type: string }>(
    `SELECT table_name, data_type FROM information_schema.columns
      WHERE table_schema = $1 AND (table_name, column_name) IN
            (('bodies', 'data'), ('transcripts', 'items'), ('state', 'value'), ('kv', 'value'))`,
    [namespace],
  );
  return Object.fromEntries(rows.map((row) => [row.table_name, row.data_type]));
}

/** The column types of version 6, and of version 7, which keeps the KV table's text. */
const AS_TEXT = { bodies: 'text', transcripts: 'text', state: 'text', kv: 'text' };
const AS_BYTES = { bodies: 'bytea', transcripts: 'bytea', state: 'bytea', kv: 'text' };

describe.skipIf(!available)('postgres values as bytes', () => {
  it('stores an encoded value as its header, marked ckpt1b;, and raw bytes (about 3/4 of the text), and a plain value as the UTF-8 bytes of its JSON', async () => {
    const namespace = namespaceToDrop();
    const encoded = storeOn(namespace, gzipOnly);
    const plain = storeOn(namespace);
    const value = bulky(1);
    const transcript = [{ role: 'user', text: `é 😀 ${randomBytes(1024).toString('hex')}` }];
    await encoded.checkpoint('encoded', value, { transcript });
    await encoded.state('scope').set('key', value);
    await plain.checkpoint('plain', value, { transcript });
    await plain.state('scope').set('plain', value);

    expect(await valueColumnTypes(namespace)).toEqual(AS_BYTES);
    const raw = await rawValues(namespace);
    // The texts core handed the backend, as it reads them back.
    const backend = backendOf(encoded);
    const [handed] = await backend.exportCheckpoints('encoded', { afterSeq: null, limit: 1 });
    const texts = {
      'bodies/encoded/1': handed!.data,
      'transcripts/encoded/1': handed!.transcript,
      'state/scope/key': (await backend.stateGet('scope', 'key'))!,
    };
    for (const [at, text] of Object.entries(texts)) {
      const held = raw.get(at) as Buffer;
      expect(text.startsWith('ckpt1;gzip;')).toBe(true);
      expect(held.subarray(0, 12).toString('latin1')).toBe('ckpt1b;gzip;');
      expect(held.equals(storedBytesOf(text))).toBe(true);
      expect(held.includes(Buffer.from(text.slice(-32)))).toBe(false);
      // The header is a byte longer; the payload, 3 bytes for each 4 characters of base64.
      const header = text.slice(0, text.lastIndexOf(';') + 1);
      const payload = held.length - header.length - 1;
      expect(payload / (text.length - header.length)).toBeGreaterThan(0.74);
      expect(payload / (text.length - header.length)).toBeLessThanOrEqual(0.75);
    }
    expect(raw.get('bodies/plain/1')).toEqual(Buffer.from(JSON.stringify(value)));
    expect(raw.get('transcripts/plain/1')).toEqual(Buffer.from(JSON.stringify(transcript)));
    expect(raw.get('state/scope/plain')).toEqual(Buffer.from(JSON.stringify(value)));
    expect((await encoded.load('encoded'))?.data).toEqual(value);
    expect((await encoded.transcript('encoded')).items.map((entry) => entry.item)).toEqual(
      transcript,
    );
    expect(await encoded.state('scope').get('key')).toEqual(value);
  });

  it('upgrades a version 6 store of plain and sealed values: each reads back exactly, new writes land as bytes, and reencode() rewrites the mixed store', async () => {
    // The texts a version 6 process stored: sealed values as core encodes them, read from a
    // store of their own, and plain JSON.
    const source = storeOn(namespaceToDrop(), sealedWith('k1'));
    const values = [bulky(1), bulky(2), bulky(3)];
    const transcriptOf = (n: number) => [{ role: 'agent', text: `step ${n} é 😀` }];
    for (const [i, value] of values.entries()) {
      await source.checkpoint('sealed', value, { transcript: transcriptOf(i), metadata: { i } });
    }
    await source.state('cfg').set('a', { limit: 1 });
    const stateB = bulky(4);
    await source.state('cfg').set('b', stateB);
    const sealed = await backendOf(source).exportCheckpoints('sealed', {
      afterSeq: null,
      limit: 10,
    });
    const sealedState = {
      a: (await backendOf(source).stateGet('cfg', 'a'))!,
      b: (await backendOf(source).stateGet('cfg', 'b'))!,
    };

    const namespace = namespaceToDrop();
    const admin = adminPool();
    await writeOldSchema(admin, namespace, 6);
    expect(await valueColumnTypes(namespace)).toEqual(AS_TEXT);
    const append = (session: string, data: string, metadata: string, items: string, at: number) =>
      admin.query(
        `SELECT * FROM "${namespace}".append($1, $2, $3, $4, false, NULL, NULL, $5, '[]')`,
        [session, data, metadata, items, at],
      );
    const texts = new Map<string, string>();
    for (const cp of sealed) {
      await append('sealed', cp.data, cp.metadata, cp.transcript, cp.createdAt);
      texts
        .set(`bodies/sealed/${cp.seq}`, cp.data)
        .set(`transcripts/sealed/${cp.seq}`, cp.transcript);
    }
    const plainValues = [{ plain: 1 }, bulky(5)];
    for (const [i, value] of plainValues.entries()) {
      await append('plain', JSON.stringify(value), '{}', JSON.stringify(transcriptOf(i)), 100 + i);
      texts
        .set(`bodies/plain/${i + 1}`, JSON.stringify(value))
        .set(`transcripts/plain/${i + 1}`, JSON.stringify(transcriptOf(i)));
    }
    const state = { 'cfg/a': sealedState.a, 'cfg/b': sealedState.b, 'plain/p': '{"plain":true}' };
    for (const [at, text] of Object.entries(state)) {
      const [scope, key] = at.split('/');
      await admin.query(`INSERT INTO "${namespace}".state VALUES ($1, $2, $3)`, [scope, key, text]);
      texts.set(`state/${at}`, text);
    }

    // Opening the store upgrades it.
    const store = storeOn(namespace, sealedWith('k1'));
    for (const [i, value] of values.entries()) {
      const cp = await store.load('sealed', i + 1);
      expect(cp?.data).toEqual(value);
      expect(cp?.metadata).toEqual({ i });
    }
    const meta = await admin.query(
      `SELECT value FROM "${namespace}".meta WHERE key = 'schema_version'`,
    );
    expect(meta.rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
    expect(await valueColumnTypes(namespace)).toEqual(AS_BYTES);
    // Each row now holds what a write of the same text would store.
    const raw = await rawValues(namespace);
    expect([...raw.keys()].sort()).toEqual([...texts.keys()].sort());
    for (const [at, text] of texts) {
      expect((raw.get(at) as Buffer).equals(storedBytesOf(text)), at).toBe(true);
    }
    expect((await store.transcript('sealed')).items.map((entry) => entry.item)).toEqual(
      [2, 1, 0].map((n) => transcriptOf(n)[0]),
    );
    expect((await store.load('plain', 2))?.data).toEqual(plainValues[1]);
    expect(await store.state('cfg').get('b')).toEqual(stateB);
    expect(await store.state('plain').get('p')).toEqual({ plain: true });

    // New writes land as bytes, beside the converted rows; a compare-and-set against a value
    // written before the upgrade matches it.
    const next = await store.checkpoint('sealed', { after: 'the upgrade' });
    const written = (await rawValues(namespace)).get(`bodies/sealed/${next.seq}`) as Buffer;
    expect(written.subarray(0, 7).toString('latin1')).toBe('ckpt1b;');
    expect(await store.state('cfg').update('a', (v) => ({ ...(v as object), more: 2 }))).toEqual({
      limit: 1,
      more: 2,
    });

    // reencode() under the second key rewrites every value of the mixed store.
    const rekeyed = storeOn(namespace, sealedWith('k2'));
    expect(await rekeyed.reencode()).toEqual({ checkpoints: 6, state: 3 });
    for (const [at, held] of await rawValues(namespace)) {
      const steps = textFromStoredBytes(held as Buffer).split(';')[1];
      expect(steps, at).toMatch(/(^|,)aes-256-gcm:k2$/);
      expect((held as Buffer).subarray(0, 7).toString('latin1')).toBe('ckpt1b;');
    }
    for (const [i, value] of values.entries()) {
      expect((await rekeyed.load('sealed', i + 1))?.data).toEqual(value);
    }
    expect((await rekeyed.load('sealed'))?.data).toEqual({ after: 'the upgrade' });
    expect((await rekeyed.load('plain', 1))?.data).toEqual({ plain: 1 });
    expect(await rekeyed.state('cfg').get('a')).toEqual({ limit: 1, more: 2 });
    expect(await rekeyed.state('plain').get('p')).toEqual({ plain: true });
  });

  it('converts each text of a version 6 store to exactly the bytes a write of it stores, odd texts included', async () => {
    const odd = ODD_TEXTS;
    const namespace = namespaceToDrop();
    const admin = adminPool();
    await writeOldSchema(admin, namespace, 6);
    for (const [i, text] of odd.entries()) {
      await admin.query(`INSERT INTO "${namespace}".state VALUES ('odd', $1, $2)`, [`k${i}`, text]);
    }
    const backend = backendOf(storeOn(namespace));
    await backend.ready();
    const raw = await rawValues(namespace);
    for (const [i, text] of odd.entries()) {
      const held = raw.get(`state/odd/k${i}`) as Buffer;
      expect(held.equals(storedBytesOf(text)), JSON.stringify(text)).toBe(true);
      expect(textFromStoredBytes(held)).toBe(text);
      expect(await backend.stateGet('odd', `k${i}`)).toBe(text);
      expect(await backend.stateCompareAndSet('odd', `k${i}`, text, '"next"')).toBe(true);
    }
    // Both forms occur: the test covers the conversion's two branches.
    const moved = odd.filter((text) => storedBytesOf(text).subarray(0, 7).toString() === 'ckpt1b;');
    expect(moved).toHaveLength(5);
  });

  it('compares values, not forms: update() and reencode() match what a process of version 6 still running writes after the upgrade', async () => {
    const source = storeOn(namespaceToDrop(), sealedWith('k1'));
    const data = bulky(1);
    await source.checkpoint('sealed', data, { transcript: [{ n: 1 }] });
    await source.state('cfg').set('sealed', bulky(2));
    const [cp] = await backendOf(source).exportCheckpoints('sealed', { afterSeq: null, limit: 1 });
    const stateText = (await backendOf(source).stateGet('cfg', 'sealed'))!;

    const namespace = namespaceToDrop();
    const admin = adminPool();
    await writeOldSchema(admin, namespace, 6);
    const store = storeOn(namespace, sealedWith('k1'));
    await backendOf(store).ready();
    // Version 6's calls, each value sent as its text: the server takes that as its UTF-8 bytes.
    await admin.query(
      `SELECT * FROM "${namespace}".append($1, $2, $3, $4, false, NULL, NULL, $5, '[]')`,
      ['sealed', cp!.data, cp!.metadata, cp!.transcript, cp!.createdAt],
    );
    await admin.query(
      `INSERT INTO "${namespace}".state VALUES ($1, $2, $3)
         ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value`,
      ['cfg', 'sealed', stateText],
    );
    const raw = await rawValues(namespace);
    expect(raw.get('state/cfg/sealed')).toEqual(Buffer.from(stateText, 'utf8'));
    expect(raw.get('bodies/sealed/1')).toEqual(Buffer.from(cp!.data, 'utf8'));

    expect(
      await store.state('cfg').update('sealed', (v) => ({ ...(v as object), more: 1 })),
    ).toMatchObject({ n: 2, more: 1 });
    const rekeyed = storeOn(namespace, sealedWith('k2'));
    expect(await rekeyed.reencode()).toEqual({ checkpoints: 1, state: 1 });
    for (const [at, held] of await rawValues(namespace)) {
      expect((held as Buffer).subarray(0, 7).toString('latin1'), at).toBe('ckpt1b;');
      expect(textFromStoredBytes(held as Buffer).split(';')[1], at).toMatch(/(^|,)aes-256-gcm:k2$/);
    }
    expect((await rekeyed.load('sealed'))?.data).toEqual(data);
    expect(await rekeyed.state('cfg').get('sealed')).toMatchObject({ n: 2, more: 1 });
  });
});
