/**
 * Reads of value columns send text the server makes of their bytes (value_text), which must be
 * exactly what textFromStoredBytes makes of the same bytes, on every path that reads a value:
 * load (head, seq, key), the append's replay, lineage with transcripts, export and state get.
 */
import { randomBytes } from 'node:crypto';
import type { EventEmitter } from 'node:events';
import { CheckpointStore, compress, encrypt, type StoreOptions } from '@ckpt/core';
import { storedBytesOf, textFromStoredBytes } from '@ckpt/core/adapter';
import { type PostgresBackend, postgres } from '@ckpt/postgres';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { ODD_TEXTS } from './odd-texts.js';
import { adminPool, available, namespaceToDrop, url } from './support.js';

const KEYS = { k1: Buffer.alloc(32, 1) };
const STORES: Record<string, StoreOptions> = {
  plain: {},
  gzip: { codecs: [compress('gzip', { minBytes: 1 })] },
  sealed: { codecs: [compress('gzip', { minBytes: 1 }), encrypt({ keys: KEYS, current: 'k1' })] },
};

/** Bytes only a raw write makes, that still read as text. */
const ODD_BYTES = [
  Buffer.alloc(0),
  Buffer.from('ckpt1b;', 'latin1'),
  Buffer.from('ckpt1b;gzip;', 'latin1'),
  Buffer.from('ckpt1b;gzip;;aQ==', 'latin1'),
  Buffer.from('ckpt1b;;;', 'latin1'),
  Buffer.concat([Buffer.from('ckpt1b;gzip;;', 'latin1'), randomBytes(1000)]),
  Buffer.concat([Buffer.from('ckpt1b;\xe9\x80;\x7f;', 'latin1'), randomBytes(57)]),
  Buffer.concat([Buffer.from('ckpt1b;a;b;', 'latin1'), Buffer.from(';;\xff', 'latin1')]),
];

const pools: pg.Pool[] = [];
const stores: CheckpointStore[] = [];
afterEach(async () => {
  for (const store of stores.splice(0)) await store.close();
  for (const pool of pools.splice(0)) await pool.end();
});

/** How many bytea columns the results a counting pool received had (see storeOn). */
const received = { bytea: 0 };
interface RowDescription {
  fields: { dataTypeID: number }[];
}

/** A store on a pool of its own; `counting`: the pool counts bytea columns in `received`. */
function storeOn(namespace: string, options: StoreOptions, counting = false): CheckpointStore {
  const pool = new pg.Pool({ connectionString: url, max: 2 });
  if (counting) {
    // Every result's row description, whichever way the query was sent and parsed.
    pool.on('connect', (client) => {
      const { connection } = client as unknown as { connection: EventEmitter };
      connection.on('rowDescription', (message: RowDescription) => {
        for (const field of message.fields) {
          if (field.dataTypeID === pg.types.builtins.BYTEA) received.bytea += 1;
        }
      });
    });
  }
  pools.push(pool);
  const store = new CheckpointStore(postgres({ pool, namespace }), options);
  stores.push(store);
  return store;
}

/** A checkpoint of `sessionId` under key `key`, whose data and transcript items are then set to `held`. */
async function heldCheckpoint(backend: PostgresBackend, sessionId: string, held: Buffer) {
  await backend.append({
    sessionId,
    data: '{}',
    metadata: '{}',
    transcript: '[{}]',
    expectedHead: undefined,
    idempotencyKey: 'key',
    now: Date.now(),
    needs: [],
  });
  const ns = `"${backend.namespace}"`;
  const admin = adminPool();
  await admin.query(`UPDATE ${ns}.bodies SET data = $2 WHERE session_id = $1`, [sessionId, held]);
  await admin.query(`UPDATE ${ns}.transcripts SET items = $2 WHERE session_id = $1`, [
    sessionId,
    held,
  ]);
  await admin.query(`INSERT INTO ${ns}.state (scope, key, value) VALUES ('held', $1, $2)`, [
    sessionId,
    held,
  ]);
}

describe.skipIf(!available)('postgres reads values as text made on the server', () => {
  it('sends text, exactly textFromStoredBytes of the bytes held, on every read path', async () => {
    const namespace = namespaceToDrop();
    for (const [name, options] of Object.entries(STORES)) {
      const store = storeOn(namespace, options);
      for (const n of [1, 2]) {
        const value = { name, n, noise: randomBytes(n * 2048).toString('hex'), note: 'é 😀' };
        const transcript = [{ role: 'user', text: `é 😀 ${randomBytes(700).toString('hex')}` }];
        await store.checkpoint(name, value, { transcript, idempotencyKey: `key${n}` });
        await store.state('held').set(`${name}${n}`, value);
      }
    }
    const backend = storeOn(namespace, {}, true).backend as PostgresBackend;
    const held = [...ODD_TEXTS.map((text) => storedBytesOf(text)), ...ODD_BYTES];
    for (const [i, bytes] of held.entries()) await heldCheckpoint(backend, `odd${i}`, bytes);

    const ns = `"${namespace}"`;
    const { rows: bodies } = await adminPool().query<{
      session_id: string;
      seq: string;
      data: Buffer;
      items: Buffer | null;
      key: string;
    }>(
      `SELECT b.session_id, b.seq, b.data, x.items, i.key FROM ${ns}.bodies b
         LEFT JOIN ${ns}.transcripts x USING (session_id, seq)
         JOIN ${ns}.idempotency i USING (session_id, seq)`,
    );
    expect(bodies).toHaveLength(2 * Object.keys(STORES).length + held.length);
    const heads = new Map<string, number>();
    for (const row of bodies) {
      heads.set(row.session_id, Math.max(heads.get(row.session_id) ?? 0, Number(row.seq)));
    }
    received.bytea = 0;
    for (const row of bodies) {
      const at = `${row.session_id}/${row.seq}`;
      const seq = Number(row.seq);
      const data = textFromStoredBytes(row.data);
      const transcript = row.items === null ? '[]' : textFromStoredBytes(row.items);
      expect((await backend.load(row.session_id, seq))?.data, at).toBe(data);
      expect((await backend.loadByKey(row.session_id, row.key))?.data, at).toBe(data);
      if (heads.get(row.session_id) === seq) {
        expect((await backend.load(row.session_id, null))?.data, at).toBe(data);
      }
      const replay = await backend.append({
        sessionId: row.session_id,
        data: '{}',
        metadata: '{}',
        transcript: '[]',
        expectedHead: undefined,
        idempotencyKey: row.key,
        now: Date.now(),
        needs: [],
      });
      expect(replay.status === 'replayed' && replay.checkpoint?.data, at).toBe(data);
      const [step] = await backend.lineage(row.session_id, {
        fromSeq: seq,
        limit: 1,
        transcript: true,
      });
      expect(step?.transcript, at).toBe(transcript);
      const [exported] = await backend.exportCheckpoints(row.session_id, {
        afterSeq: seq - 1,
        limit: 1,
      });
      expect([exported?.data, exported?.transcript], at).toEqual([data, transcript]);
    }

    const { rows: state } = await adminPool().query<{ key: string; value: Buffer }>(
      `SELECT key, value FROM ${ns}.state WHERE scope = 'held'`,
    );
    expect(state).toHaveLength(2 * Object.keys(STORES).length + held.length);
    for (const row of state) {
      expect(await backend.stateGet('held', row.key), row.key).toBe(textFromStoredBytes(row.value));
    }
    // The server sent text: not one column came as bytea (hex on the wire, twice its size).
    expect(received.bytea).toBe(0);
    // The values written through the codecs read back as they were written.
    for (const [name, options] of Object.entries(STORES)) {
      const loaded = await storeOn(namespace, options).load(name, 1);
      expect(loaded?.data).toMatchObject({ name, n: 1 });
    }
  });

  it('refuses, with a hint, bytes that are neither UTF-8 text nor the encoded form', async () => {
    const store = storeOn(namespaceToDrop(), {});
    const backend = store.backend as PostgresBackend;
    const unreadable = [
      Buffer.from([0x7b, 0xff, 0x7d]),
      Buffer.from('{"a":"\0"}', 'latin1'),
      Buffer.from('ckpt1b;gz\0;;aQ==', 'latin1'),
    ];
    const refused = expect.objectContaining({
      code: 'BACKEND',
      message: expect.stringMatching(/neither UTF-8 text nor ckpt's encoded form/),
    });
    for (const [i, bytes] of unreadable.entries()) {
      await heldCheckpoint(backend, `bad${i}`, bytes);
      await expect(store.load(`bad${i}`)).rejects.toEqual(refused);
      await expect(store.state('held').get(`bad${i}`)).rejects.toEqual(refused);
      await expect(store.transcript(`bad${i}`)).rejects.toEqual(refused);
    }
  });
});
