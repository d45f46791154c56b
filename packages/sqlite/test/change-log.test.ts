/**
 * SQLite's change log (schema step 5): changes from other processes, a log trimmed past a
 * watcher's cursor, and the step from schema 4 with the values it held.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  expectCursorExpired,
  expectUpgradedValuesReadAndWatched,
  firstEvents,
  plainAndCompressedValues,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore, compress } from '@ckpt/core';
import { storedBytesOf } from '@ckpt/core/adapter';
import { sqlite } from '@ckpt/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { tables } from '../src/schema.js';
import { fileAtVersion } from './old-schemas.js';
import { exited, startWorker } from './support/child.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-changes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fresh = () => join(dir, `changes-${files++}.db`);
const t = tables('ckpt');

describe("SQLite's change log", () => {
  it('gives every checkpoint another process writes, in order', async () => {
    const path = fresh();
    const store = new CheckpointStore(sqlite({ path }));
    const stream = store.watch({ sessionId: 'elsewhere' });
    await stream.ready;
    const worker = exited(await startWorker(['write', path, 'elsewhere', '30', 'p0']));
    const events = await firstEvents(stream, 30);
    expect(await worker).toMatchObject({ code: 0 });
    expect(events.map((e) => [e.kind, e.seq])).toEqual(
      Array.from({ length: 30 }, (_, i) => ['checkpoint', i + 1]),
    );
    await store.close();
  }, 60_000);

  it('fails a watcher whose cursor the log let go of with EXPIRED, and goes on for the others', async () => {
    const path = fresh();
    const backend = sqlite({ path, worker: false });
    const store = new CheckpointStore(backend);
    const first = store.watch();
    await first.ready;
    await store.checkpoint('old', 1);
    const [seen] = await firstEvents(first, 1);
    // 11,000 changes at once, as a busy store makes them: the log keeps the latest 10,000.
    backend.db.exec(`
      WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 11000)
      INSERT INTO ${t.changes} (session_id, kind, seq) SELECT 'busy', 'checkpoint', i FROM n`);
    const count = backend.db.prepare(`SELECT count(*) AS n FROM ${t.changes}`).get() as {
      n: number;
    };
    expect(count.n).toBeLessThan(11_000);
    await expectCursorExpired(store, seen!.cursor);
    await store.close();
  });

  it('comes with schema 5 to a file of schema 4, whose sessions, plain and compressed, read on', async () => {
    const path = fresh();
    const { values, data } = await plainAndCompressedValues();
    const old = fileAtVersion(path, 4);
    old.transaction(() => {
      for (const [id, value] of Object.entries(values)) {
        const body = Number(
          old.prepare(`INSERT INTO ${t.bodies} (data) VALUES (?)`).run(storedBytesOf(value))
            .lastInsertRowid,
        );
        old
          .prepare(`INSERT INTO ${t.checkpoints} VALUES (?, 1, NULL, 1000, '{}', ?, NULL)`)
          .run(id, body);
        old
          .prepare(`
            INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_parent,
              head_created_at, head_body, metadata, created_at, updated_at)
            VALUES (?, 1, 1, 1, NULL, 1000, ?, '{}', 1000, 1000)`)
          .run(id, body);
      }
    })();
    old.close();
    const store = new CheckpointStore(sqlite({ path }), { codecs: [compress('gzip')] });
    await expectUpgradedValuesReadAndWatched(store, data);
    await store.close();
  });
});
