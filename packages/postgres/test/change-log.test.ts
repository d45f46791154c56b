/**
 * PostgreSQL's change log (schema step 8): a transaction that commits after a later one, a
 * listening connection cut and made again, connections released, a log trimmed past a
 * watcher's cursor, and the step from schema 7 with the values it held.
 */
import {
  expectCursorExpired,
  expectUpgradedValuesReadAndWatched,
  firstEvents,
  plainAndCompressedValues,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore, compress } from '@ckpt/core';
import { storedBytesOf } from '@ckpt/core/adapter';
import { postgres, SCHEMA_VERSION } from '@ckpt/postgres';
import { describe, expect, it } from 'vitest';
import { listenerName } from '../src/change-log.js';
import { migrations } from '../src/schema.js';
import { oldFunctions } from './old-schemas.js';
import { adminPool, available, freshBackend, namespaceToDrop, url } from './support.js';

/** The connections named `name` on the server now. */
async function named(name: string): Promise<number> {
  const { rows } = await adminPool().query<{ n: number }>(
    'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
    [name],
  );
  return rows[0]!.n;
}

/** The listening connections of namespace `ns` on the server now. */
const listeners = (ns: string) => named(listenerName(ns));

async function until(check: () => Promise<boolean>, what: string): Promise<void> {
  for (let tries = 0; tries < 300; tries++) {
    if (await check()) return;
    await new Promise((resolve) => setTimeout(resolve, 50));
  }
  throw new Error(`still not ${what} after 15 s`);
}

const brief = (e: { sessionId: string; kind: string; seq?: number }) => [
  e.sessionId,
  e.kind,
  e.seq,
];

describe.runIf(available)("PostgreSQL's change log", () => {
  it('gives a change whose transaction began first, and committed last, before the later one', async () => {
    const namespace = namespaceToDrop();
    const store = new CheckpointStore(await freshBackend(url, namespace));
    const stream = store.watch();
    await stream.ready;
    // A transaction that takes its id, writes a state value and waits, open.
    const held = await adminPool().connect();
    try {
      await held.query('BEGIN');
      await held.query(
        `INSERT INTO "${namespace}".state (scope, key, value) VALUES ('first', 'k', '\\x31')`,
      );
      await store.checkpoint('second', 1);
      await held.query('COMMIT');
    } finally {
      held.release();
    }
    expect((await firstEvents(stream, 2)).map(brief)).toEqual([
      ['first', 'state', undefined],
      ['second', 'checkpoint', 1],
    ]);
    await store.close();
  });

  it('learns what changed while its listening connection was cut, and listens again', async () => {
    const namespace = namespaceToDrop();
    const store = new CheckpointStore(await freshBackend(url, namespace));
    const writer = new CheckpointStore(postgres({ url, namespace }));
    // A watcher that stays while the other's events are taken, and the connection with it.
    const staying = store.watch({ sessionId: 'none' });
    const stream = store.watch({ sessionId: 'cut' });
    await Promise.all([staying.ready, stream.ready]);
    await until(async () => (await listeners(namespace)) === 1, 'listening');
    await adminPool().query(
      'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
      [listenerName(namespace)],
    );
    for (let n = 1; n <= 5; n++) await writer.checkpoint('cut', n);
    expect((await firstEvents(stream, 5)).map((e) => e.seq)).toEqual([1, 2, 3, 4, 5]);
    await until(async () => (await listeners(namespace)) === 1, 'listening again');
    await writer.close();
    await store.close();
  });

  it('holds one listening connection for all its watchers, and none once they end', async () => {
    const namespace = namespaceToDrop();
    const store = new CheckpointStore(await freshBackend(url, namespace));
    const controller = new AbortController();
    const streams = Array.from({ length: 20 }, (_, i) =>
      store.watch({ sessionId: `s${i}`, signal: controller.signal }),
    );
    await Promise.all(streams.map((s) => s.ready));
    await until(async () => (await listeners(namespace)) === 1, 'listening');
    await store.checkpoint('s7', 1);
    expect((await firstEvents(streams[7]!, 1)).map(brief)).toEqual([['s7', 'checkpoint', 1]]);
    controller.abort();
    await until(async () => (await listeners(namespace)) === 0, 'released');
    const again = store.watch();
    await again.ready;
    await until(async () => (await listeners(namespace)) === 1, 'listening again');
    await store.close();
    await until(async () => (await listeners(namespace)) === 0, 'released at close');
  });

  it('notifies on one connection a process for every backend on the namespace, let go once idle and made again', async () => {
    const namespace = namespaceToDrop();
    const notifiers = () => named(`ckpt notify: ${namespace}`);
    const watching = new CheckpointStore(await freshBackend(url, namespace));
    const writers = [0, 1, 2].map(() => new CheckpointStore(postgres({ url, namespace })));
    const stream = watching.watch({ prefix: 'w' });
    await stream.ready;
    await Promise.all(writers.map((writer, i) => writer.checkpoint(`w${i}`, 1)));
    // Sent after the writes resolved: once one connection is there, the others would be too.
    await until(async () => (await notifiers()) > 0, 'notifying');
    await new Promise((resolve) => setTimeout(resolve, 200));
    expect(await notifiers()).toBe(1);
    await until(async () => (await notifiers()) === 0, 'let go while idle');
    await writers[0]!.checkpoint('w0', 2);
    expect((await firstEvents(stream, 4)).map(brief)).toEqual(
      expect.arrayContaining([
        ['w0', 'checkpoint', 1],
        ['w1', 'checkpoint', 1],
        ['w2', 'checkpoint', 1],
        ['w0', 'checkpoint', 2],
      ]),
    );
    await until(async () => (await notifiers()) > 0, 'notifying again');
    expect(await notifiers()).toBe(1);
    for (const writer of writers) await writer.close();
    await watching.close();
  });

  it('fails a watcher whose cursor the log let go of with EXPIRED', async () => {
    const namespace = namespaceToDrop();
    const store = new CheckpointStore(await freshBackend(url, namespace));
    const first = store.watch();
    await first.ready;
    await store.checkpoint('old', 1);
    const [seen] = await firstEvents(first, 1);
    // 11,000 state values in one statement: the log keeps the latest 10,000 changes.
    await adminPool().query(
      `INSERT INTO "${namespace}".state (scope, key, value)
       SELECT 'busy', 'k' || i, '\\x31' FROM generate_series(1, 11000) AS i`,
    );
    await expectCursorExpired(store, seen!.cursor);
    await store.close();
  });

  it('comes with schema 8 to a schema of version 7, whose sessions, plain and compressed, read on', async () => {
    const namespace = namespaceToDrop();
    const admin = adminPool();
    // Version 7's tables, and its functions.
    await admin.query(`CREATE SCHEMA "${namespace}"`);
    await admin.query(
      `CREATE TABLE "${namespace}".meta (key text PRIMARY KEY, value text NOT NULL)`,
    );
    for (const step of migrations(namespace).slice(0, 7)) await admin.query(step);
    await admin.query(oldFunctions(namespace, 7));
    await admin.query(`INSERT INTO "${namespace}".meta VALUES ('schema_version', '7')`);
    const { values, data } = await plainAndCompressedValues();
    for (const [id, value] of Object.entries(values)) {
      await admin.query(
        `SELECT * FROM "${namespace}".append($1, $2, '{}', '\\x5b5d', false, NULL, NULL, 1000, '[]')`,
        [id, storedBytesOf(value)],
      );
    }
    const store = new CheckpointStore(postgres({ url, namespace }), {
      codecs: [compress('gzip')],
    });
    await expectUpgradedValuesReadAndWatched(store, data);
    const { rows } = await admin.query(
      `SELECT value FROM "${namespace}".meta WHERE key = 'schema_version'`,
    );
    expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
    await store.close();
  });
});
