/**
 * The MySQL / MariaDB change log (schema step 10): a change whose transaction is still running
 * when later ones commit is waited for, never skipped; the rows of calls undone leave gaps that
 * do not hold the log up; a log trimmed past a watcher's cursor; the step from schema 9 with
 * the values it held.
 */
import {
  expectCursorExpired,
  expectUpgradedValuesReadAndWatched,
  firstEvents,
  plainAndCompressedValues,
} from '@ckpt/contract-tests/servers';
import { type ChangeEvent, CheckpointStore, compress, isCkptError } from '@ckpt/core';
import { storedBytesOf } from '@ckpt/core/adapter';
import { mysql, SCHEMA_VERSION } from '@ckpt/mysql';
import { describe, expect, it } from 'vitest';
import { KEPT_CHANGES, TRIM_EVERY } from '../src/change-log.js';
import { tables } from '../src/schema.js';
import { versionTenProcedures, writeOldTables } from './old-schemas.js';
import {
  adminPool,
  available,
  dropAndClose,
  freshBackend,
  namespaceToDrop,
  url,
} from './support.js';

/** Collects what `stream` gives, in the background, until it ends. */
function collect(stream: AsyncIterable<ChangeEvent>): ChangeEvent[] {
  const seen: ChangeEvent[] = [];
  void (async () => {
    for await (const event of stream) seen.push(event);
  })();
  return seen;
}

/** Resolves once `events` holds `count`, checking every 10 ms for at most 10 s. */
async function until(events: ChangeEvent[], count: number): Promise<void> {
  for (let waited = 0; events.length < count; waited += 10) {
    if (waited > 10_000) throw new Error(`${events.length} events, not ${count}`);
    await new Promise((resolve) => setTimeout(resolve, 10));
  }
}

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe.runIf(available)('the MySQL change log', () => {
  it('waits for a change whose transaction is still running, and gives it before the later ones', async () => {
    const backend = await freshBackend();
    const t = tables(backend.namespace);
    const store = new CheckpointStore(backend);
    const writer = new CheckpointStore(mysql({ url, namespace: backend.namespace }));
    const stream = store.watch();
    await stream.ready;
    const events = collect(stream);
    // A change whose transaction has taken its id and not committed, as a slow write's would.
    const held = await adminPool().getConnection();
    try {
      await held.query('START TRANSACTION');
      await held.query(
        `INSERT INTO ${t.changes} (session_id, kind, seq) SELECT 'held', 'checkpoint', 1`,
      );
      await writer.checkpoint('after', 1);
      await writer.checkpoint('after', 2);
      // Later changes committed, the earlier one not yet: nothing may come past it.
      await sleep(300);
      expect(events).toEqual([]);
      await held.query('COMMIT');
    } finally {
      held.release();
    }
    await until(events, 3);
    expect(events.map((e) => [e.sessionId, e.seq])).toEqual([
      ['held', 1],
      ['after', 1],
      ['after', 2],
    ]);
    await writer.close();
    await store.close();
    await dropAndClose(backend);
  }, 30_000);

  it('passes over the rows of calls undone, and of a transaction rolled back', async () => {
    const backend = await freshBackend();
    const t = tables(backend.namespace);
    const store = new CheckpointStore(backend);
    const stream = store.watch();
    await stream.ready;
    const events = collect(stream);
    await store.checkpoint('c', 1);
    // A stale head: the procedure takes the session's row (its trigger logs a change), then
    // undoes the call.
    const refused = await store.checkpoint('c', 2, { expectedHead: 7 }).catch((err) => err);
    expect(isCkptError(refused, 'CONFLICT')).toBe(true);
    const held = await adminPool().getConnection();
    try {
      await held.query('START TRANSACTION');
      await held.query(
        `INSERT INTO ${t.changes} (session_id, kind, seq) SELECT 'ghost', 'checkpoint', 1`,
      );
      await held.query('ROLLBACK');
    } finally {
      held.release();
    }
    await store.checkpoint('c', 3);
    await until(events, 2);
    expect(events.map((e) => [e.sessionId, e.seq])).toEqual([
      ['c', 1],
      ['c', 2],
    ]);
    // The log has its gaps: the two changes undone took ids between those two.
    const [rows] = (await adminPool().query(
      `SELECT id FROM ${t.changes} ORDER BY id`,
    )) as unknown as [{ id: number }[]];
    expect(rows.map((row) => Number(row.id))).toHaveLength(2);
    expect(Number(rows[1]!.id) - Number(rows[0]!.id)).toBe(3);
    await store.close();
    await dropAndClose(backend);
  }, 30_000);

  it('fails a watcher whose cursor the log let go of with EXPIRED, and goes on for the others', async () => {
    const backend = await freshBackend();
    const t = tables(backend.namespace);
    const store = new CheckpointStore(backend);
    const first = store.watch();
    await first.ready;
    await store.checkpoint('old', 1);
    const [seen] = await firstEvents(first, 1);
    // More changes than the log keeps, as a busy store makes them; then the writes after which
    // a backend trims.
    for (let from = 0; from <= KEPT_CHANGES; from += 1_000) {
      const rows = Array.from({ length: 1_000 }, (_, i) => ['busy', 'checkpoint', from + i]);
      await adminPool().query(`INSERT INTO ${t.changes} (session_id, kind, seq) VALUES ?`, [rows]);
    }
    const busy = store.state('busy');
    for (let i = 0; i < TRIM_EVERY; i++) await busy.set('k', i);
    // Each backend trims after its writes, in the background: the meta row says when it has.
    const trimmed = async () => {
      const [rows] = (await adminPool().query(
        `SELECT value FROM ${t.meta} WHERE k = 'changes_trimmed_through'`,
      )) as unknown as [{ value: string }[]];
      return rows.length > 0;
    };
    for (let waited = 0; !(await trimmed()); waited += 20) {
      if (waited > 10_000) throw new Error('the log was not trimmed');
      await sleep(20);
    }
    const [[{ n }]] = (await adminPool().query(
      `SELECT COUNT(*) AS n FROM ${t.changes}`,
    )) as unknown as [[{ n: number }]];
    expect(Number(n)).toBeLessThan(KEPT_CHANGES + 1_000);
    await expectCursorExpired(store, seen!.cursor);
    await store.close();
    await dropAndClose(backend);
  }, 60_000);

  it('comes with schema 10 to a namespace of schema 9, whose sessions, plain and compressed, read on', async () => {
    const namespace = namespaceToDrop();
    const admin = adminPool();
    // Version 9's tables, and its append.
    await writeOldTables(admin, namespace, 9);
    for (const statement of versionTenProcedures(namespace)) await admin.query(statement);
    const { values, data } = await plainAndCompressedValues();
    for (const [id, value] of Object.entries(values)) {
      await admin.query(
        `CALL ${namespace}_append(?, ?, '{}', '[]', false, NULL, NULL, 1000, '[]')`,
        [id, storedBytesOf(value)],
      );
    }
    const store = new CheckpointStore(mysql({ url, namespace }), { codecs: [compress('gzip')] });
    await expectUpgradedValuesReadAndWatched(store, data);
    const [rows] = await admin.query(
      `SELECT value FROM ${namespace}_meta WHERE k = 'schema_version'`,
    );
    expect(rows).toEqual([{ value: String(SCHEMA_VERSION) }]);
    await store.close();
  }, 30_000);
});
