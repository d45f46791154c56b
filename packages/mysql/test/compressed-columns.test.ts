/**
 * Compressed value columns (schema version 9): on MariaDB, checkpoint data, transcript items and
 * state values are held zlib-compressed by the server and read back as they were written; the
 * upgrade of a version 8 namespace keeps every value, plain and encoded. MySQL reads the step
 * as a comment and keeps its columns as they were.
 */
import { createHash } from 'node:crypto';
import { CheckpointStore, compress, encrypt, type StoreOptions } from '@ckpt/core';
import { storedBytesOf } from '@ckpt/core/adapter';
import { SQL_TABLES } from '@ckpt/core/sql';
import { type MysqlBackend, mysql, SCHEMA_VERSION } from '@ckpt/mysql';
import { describe, expect, it } from 'vitest';
import { tables } from '../src/schema.js';
import { copyRows, writeOldTables } from './old-schemas.js';
import {
  adminPool,
  available,
  dropAndClose,
  freshBackend,
  namespaceToDrop,
  url,
} from './support.js';

const KEY = createHash('sha256').update('compressed columns key').digest();
const SEALED: StoreOptions = {
  codecs: [compress('gzip', { minBytes: 16 }), encrypt({ keys: { k1: KEY }, current: 'k1' })],
};

/** A state as an agent's grows: JSON that repeats itself, about 10 KiB. */
const stateAt = (step: number) => ({
  step,
  messages: Array.from({ length: 60 }, (_, i) => ({
    role: i % 2 ? 'assistant' : 'user',
    content: `message ${i} of the conversation, which the agent keeps as it goes on`,
  })),
});
const ITEMS = [{ role: 'user', text: 'hello 😀' }];

async function query<Row>(sql: string, values: unknown[] = []): Promise<Row[]> {
  const [rows] = (await adminPool().query(sql, values)) as unknown as [Row[]];
  return rows;
}

/** The one row `sql` reads. */
async function one<Row>(sql: string, values: unknown[] = []): Promise<Row> {
  const [row] = await query<Row>(sql, values);
  if (row === undefined) throw new Error(`no row: ${sql}`);
  return row;
}

const isMariadb = async () =>
  (await query<{ v: string }>('SELECT VERSION() AS v'))[0]!.v.includes('MariaDB');

/** Whether each value column of namespace `ns` is a COMPRESSED column. */
async function compressedColumns(ns: string): Promise<boolean[]> {
  const t = tables(ns);
  const out: boolean[] = [];
  for (const [table, column] of [
    [t.bodies, 'data'],
    [t.transcripts, 'items'],
    [t.state, 'value'],
  ] as const) {
    const { 'Create Table': ddl } = await one<{ 'Create Table': string }>(
      `SHOW CREATE TABLE ${table}`,
    );
    // As MariaDB shows it: `data` longblob /*M!100301 COMPRESSED*/ NOT NULL
    out.push(new RegExp(`\`${column}\` longblob /\\*M!\\d* COMPRESSED ?\\*/`, 'i').test(ddl));
  }
  return out;
}

/** The bytes InnoDB gives the pages of a namespace's bodies table, and the values' own bytes. */
async function bodiesRoom(ns: string): Promise<{ pages: number; values: number }> {
  const t = tables(ns);
  await query(`ANALYZE TABLE ${t.bodies}`);
  const { pages } = await one<{ pages: number }>(
    `SELECT data_length AS pages FROM information_schema.tables
      WHERE table_schema = DATABASE() AND table_name = ?`,
    [t.bodies],
  );
  const { values } = await one<{ values: string }>(
    `SELECT sum(length(data)) AS \`values\` FROM ${t.bodies}`,
  );
  return { pages: Number(pages), values: Number(values) };
}

describe.skipIf(!available)('mysql compressed value columns', () => {
  it('holds checkpoint data in a fraction of its bytes on MariaDB, and reads it back exactly', async () => {
    const backend = await freshBackend();
    const store = new CheckpointStore(backend);
    for (let step = 1; step <= 200; step++) {
      await store.checkpoint('agent', stateAt(step), { transcript: ITEMS });
    }
    const room = await bodiesRoom(backend.namespace);
    if (await isMariadb()) {
      expect(await compressedColumns(backend.namespace)).toEqual([true, true, true]);
      // Uncompressed, InnoDB's pages hold more than the values' bytes.
      expect(room.pages).toBeLessThan(room.values / 3);
    } else {
      expect(await compressedColumns(backend.namespace)).toEqual([false, false, false]);
    }
    expect((await store.load('agent', 7))?.data).toEqual(stateAt(7));
    expect((await store.load('agent'))?.data).toEqual(stateAt(200));
    await dropAndClose(backend);
  });

  it('upgrades a version 8 namespace, keeping every value, plain and encoded', async () => {
    // Version 10 added the change log, and 11 the tags (a column of the sessions' rows, which
    // copyRows leaves behind, and a table): the value tables have version 9's columns.
    expect(SCHEMA_VERSION).toBe(11);
    // What a version 8 namespace holds: a store of this version writes the values, and its
    // rows are copied into version 8's tables (the server hands over each value as it was).
    const source = await freshBackend();
    const sealedSource = new CheckpointStore(source, SEALED);
    const plainSource = new CheckpointStore(source);
    await sealedSource.checkpoint('sealed', stateAt(1), { transcript: ITEMS });
    await sealedSource.checkpoint('sealed', stateAt(2), { transcript: ITEMS, needs: [1] });
    await sealedSource.pin('sealed', 1, { note: 'kept' });
    for (let step = 1; step <= 3; step++) {
      await plainSource.checkpoint('plain', stateAt(step), { transcript: ITEMS });
    }
    await sealedSource.state('scope').set('sealed', stateAt(1));
    await plainSource.state('scope').set('plain', stateAt(1));

    const ns = namespaceToDrop();
    const t = tables(ns);
    const from = tables(source.namespace);
    await writeOldTables(adminPool(), ns, 8);
    expect(await compressedColumns(ns)).toEqual([false, false, false]);
    // Every table of schema 8 but the one recording the version, and the KV store's, which is
    // empty (the change log and the tags are not among them).
    const copied = SQL_TABLES.filter((name) => !['meta', 'kv', 'changes', 'tags'].includes(name));
    for (const table of copied) await copyRows(adminPool(), from[table], t[table]);

    const backend: MysqlBackend = mysql({ url, namespace: ns });
    await backend.ready();
    expect(await query(`SELECT value FROM ${t.meta}`)).toEqual([{ value: String(SCHEMA_VERSION) }]);
    expect(await compressedColumns(ns)).toEqual(Array(3).fill(await isMariadb()));

    const sealed = new CheckpointStore(backend, SEALED);
    for (const id of ['sealed', 'plain']) {
      const texts = await backend.exportCheckpoints(id, { afterSeq: null, limit: 10 });
      expect(texts).toEqual(await source.exportCheckpoints(id, { afterSeq: null, limit: 10 }));
      // The raw driver reads what this version stores for each text.
      for (const cp of texts) {
        const { data } = await one<{ data: Buffer }>(
          `SELECT data FROM ${t.bodies} WHERE session_id = ? AND seq = ?`,
          [id, cp.seq],
        );
        expect(data.equals(storedBytesOf(cp.data))).toBe(true);
      }
      expect(await sealed.load(id)).toEqual(
        await (id === 'sealed' ? sealedSource : plainSource).load(id),
      );
    }
    expect((await sealed.list('sealed')).items.map((c) => [c.seq, c.pinned])).toEqual([
      [2, false],
      [1, true],
    ]);
    expect(await sealed.state('scope').get('sealed')).toEqual(stateAt(1));
    expect(await sealed.state('scope').get('plain')).toEqual(stateAt(1));

    // New values beside the upgraded ones, a compare-and-set and a rewrite over both.
    await sealed.checkpoint('plain', stateAt(4), { transcript: ITEMS });
    expect((await sealed.load('plain'))?.data).toEqual(stateAt(4));
    await sealed.state('scope').update('plain', () => stateAt(5));
    expect(await sealed.state('scope').get('plain')).toEqual(stateAt(5));
    expect(await sealed.reencode()).toEqual({ checkpoints: 3, state: 0 });
    expect((await sealed.load('plain', 1))?.data).toEqual(stateAt(1));

    await backend.close();
    await dropAndClose(source);
  });
});
