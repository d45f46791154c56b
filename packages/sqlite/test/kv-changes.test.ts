/**
 * sqliteKv's log of its writes (`changes`, which kvBackend's watch() reads): every write of any
 * connection or process, in commit order, with its value; none for a write that did not
 * happen; a log trimmed past a reader; and a file from before the log, which gains it.
 */
import { spawnSync } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { firstEvents } from '@ckpt/contract-tests/servers';
import { CheckpointStore, type KvStore, kvBackend } from '@ckpt/core';
import { logPosition } from '@ckpt/core/adapter';
import { KeyValueTable, keyValueStore } from '@ckpt/core/sql';
import { sqliteKv } from '@ckpt/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import { openDatabase } from '../src/connection.js';
import { execute } from '../src/runner.js';
import { kvMigrations, tables } from '../src/schema.js';
import { keyValueStatements } from '../src/statements.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-kv-changes-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;
const fresh = () => join(dir, `kv-${files++}.db`);

/** Every write of `kv`'s log after `after`, with values, read a page of 100 at a time. */
async function writesAfter(kv: KvStore, after: string) {
  const all: { key: string; value: string | null }[] = [];
  for (let from = after; ; ) {
    const page = await kv.changes!({ after: from, limit: 100 });
    if (typeof page === 'string') throw new Error(`the log answered ${page}`);
    all.push(...page.changes.map(({ key, value }) => ({ key, value })));
    if (page.changes.length < 100) return all;
    from = page.position;
  }
}

async function endOf(kv: KvStore): Promise<string> {
  const end = await kv.changes!({ after: null, limit: 0 });
  if (typeof end === 'string') throw new Error(`the log answered ${end}`);
  return end.position;
}

describe("sqliteKv's log of its writes", () => {
  it('has every write of another connection, in order, and none that did not happen', async () => {
    const path = fresh();
    const reader = sqliteKv({ path });
    const writer = sqliteKv({ path });
    const start = await endOf(reader);
    await writer.set('a', '1');
    await writer.set('a', '2');
    expect(await writer.compareAndSet!('a', '1', 'lost')).toBe(false);
    expect(await writer.compareAndSet!('a', null, 'lost')).toBe(false);
    expect(await writer.compareAndSet!('a', '2', '3')).toBe(true);
    expect(await writer.compareAndSet!('b', null, 'new')).toBe(true);
    expect(await writer.delete('a')).toBe(true);
    expect(await writer.delete('a')).toBe(false);
    expect(await writesAfter(reader, start)).toEqual([
      { key: 'a', value: '1' },
      { key: 'a', value: '2' },
      { key: 'a', value: '3' },
      { key: 'b', value: 'new' },
      { key: 'a', value: null },
    ]);
    await Promise.all([reader.close?.(), writer.close?.()]);
  });

  it('has a write another process made with its own SQL, which no ckpt code saw', async () => {
    const path = fresh();
    const kv = sqliteKv({ path });
    const start = await endOf(kv);
    const table = tables('ckpt').kv;
    const child = spawnSync(
      process.execPath,
      [
        '-e',
        `const db = new (require('better-sqlite3'))(process.argv[1]);
         db.prepare("INSERT INTO ${table} (key, value) VALUES ('from-child', 'x')").run();
         db.close();`,
        path,
      ],
      // Where node finds better-sqlite3: this package's own dependency.
      { cwd: fileURLToPath(new URL('..', import.meta.url)), encoding: 'utf8' },
    );
    expect(child.stderr).toBe('');
    expect(child.status).toBe(0);
    expect(await writesAfter(kv, start)).toEqual([{ key: 'from-child', value: 'x' }]);
    await kv.close?.();
  });

  it('answers expired once the log let go of what followed a position, and unknown for one it never made', async () => {
    const path = fresh();
    const kv = sqliteKv({ path, synchronous: 'off' });
    const start = await endOf(kv);
    await kv.set('k', '0');
    const afterFirst = await endOf(kv);
    for (let i = 1; i <= 11_000; i++) await kv.set('k', String(i));
    expect(await kv.changes!({ after: start, limit: 10 })).toBe('expired');
    expect(await kv.changes!({ after: afterFirst, limit: 10 })).toBe('expired');
    // The newest 10,000 are kept: a reader 9,000 writes behind reads on.
    const end = await endOf(kv);
    const behind = logPosition(Number(end) - 9_000);
    const page = await kv.changes!({ after: behind, limit: 2 });
    expect(page).toMatchObject({ changes: [{ key: 'k', value: '2001' }, { value: '2002' }] });
    for (const after of ['nonsense', '12', end.replace(/\d/g, '9')]) {
      expect(await kv.changes!({ after, limit: 10 })).toBe('unknown');
    }
    await kv.close?.();
  }, 60_000);

  it('comes to a file made before it, whose sessions then read and are watched', async () => {
    const path = fresh();
    // The KV store as the first release made it (its table, schema version 1, no log), and a
    // session written there by a kvBackend whose records did not say which change wrote them.
    const old = openDatabase({ path }, 'kv_schema_version', kvMigrations);
    const table = tables('ckpt').kv;
    const oldKv = keyValueStore(
      new KeyValueTable(keyValueStatements(old.db, table, ['key']), execute),
      {
        close: async () => void old.db.close(),
      },
    );
    const before = new CheckpointStore(kvBackend(oldKv));
    await before.checkpoint('s', { n: 1 });
    old.db
      .prepare(`UPDATE ${table} SET value = json_remove(value, '$.change') WHERE key = 'ckpt:s:s'`)
      .run();
    expect(JSON.parse((await oldKv.get('ckpt:s:s')) as string)).not.toHaveProperty('change');
    await before.close();
    const store = new CheckpointStore(kvBackend(sqliteKv({ path })));
    const writer = new CheckpointStore(kvBackend(sqliteKv({ path })));
    const stream = store.watch({ sessionId: 's' });
    await stream.ready;
    await writer.checkpoint('s', { n: 2 });
    await writer.rollback('s', 1);
    expect((await firstEvents(stream, 2)).map((e) => [e.kind, e.seq])).toEqual([
      ['checkpoint', 2],
      ['rollback', 1],
    ]);
    expect((await store.load('s'))?.data).toEqual({ n: 1 });
    await Promise.all([store.close(), writer.close()]);
  });
});
