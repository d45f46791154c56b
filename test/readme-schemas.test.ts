/**
 * The "Schema" table of each SQL backend's README names exactly the tables that its backend and
 * its KV store create, so that the description an operator reads cannot drift from the database.
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { mysqlKv } from '@ckpt/mysql';
import { postgresKv } from '@ckpt/postgres';
import { sqlite, sqliteKv } from '@ckpt/sqlite';
import { afterAll, describe, expect, it } from 'vitest';
import * as mysqlServer from '../packages/mysql/test/support.js';
import * as postgresServer from '../packages/postgres/test/support.js';

/**
 * The tables the README's "## Schema" section lists, for namespace `ckpt`: the backticked
 * names of each row's first cell (a cell may hold several, `ckpt.state`, `ckpt.kv`).
 */
function readmeTables(pkg: string): string[] {
  const readme = readFileSync(new URL(`../packages/${pkg}/README.md`, import.meta.url), 'utf8');
  const section = readme.split(/^## Schema.*$/m)[1]?.split(/^## /m)[0];
  if (section === undefined)
    throw new Error(`packages/${pkg}/README.md has no "## Schema" section`);
  return section
    .split('\n')
    .filter((line) => line.startsWith('| `'))
    .flatMap((line) => [...line.split('|')[1]!.matchAll(/`([^`]+)`/g)].map((m) => m[1]!))
    .sort();
}

/** `names` with the namespace `ns` in place of the README's `ckpt`. */
const inNamespace = (names: string[], ns: string) =>
  names.map((name) => name.replace(/^ckpt/, ns)).sort();

describe('sqlite', () => {
  const dir = mkdtempSync(join(tmpdir(), 'ckpt-readme-schema-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  it('lists in its README every table that sqlite() and sqliteKv() create, and no other', async () => {
    const path = join(dir, 'schema.db');
    const backend = sqlite({ path });
    const kv = sqliteKv({ path });
    const created = backend.db
      .prepare("SELECT name FROM sqlite_schema WHERE type = 'table' ORDER BY name")
      .pluck()
      .all();
    await kv.close?.();
    await backend.close();
    expect(created).toEqual(readmeTables('sqlite'));
  });
});

describe.skipIf(!postgresServer.available)('postgres', () => {
  it('lists in its README every table that postgres() and postgresKv() create, and no other', async () => {
    const backend = await postgresServer.freshBackend();
    const { namespace } = backend;
    const kv = postgresKv({ url: postgresServer.url, namespace });
    try {
      await kv.get('any');
      const { rows } = await backend.pool.query<{ name: string }>(
        'SELECT $1 || table_name AS name FROM information_schema.tables WHERE table_schema = $2 ORDER BY 1',
        [`${namespace}.`, namespace],
      );
      expect(rows.map((r) => r.name)).toEqual(inNamespace(readmeTables('postgres'), namespace));
    } finally {
      await kv.close?.();
      await postgresServer.dropAndClose(backend);
    }
  });
});

describe.skipIf(!mysqlServer.available)('mysql', () => {
  it('lists in its README every table that mysql() and mysqlKv() create, and no other', async () => {
    const backend = await mysqlServer.freshBackend();
    const { namespace } = backend;
    const kv = mysqlKv({ url: mysqlServer.url, namespace });
    try {
      await kv.get('any');
      const [rows] = (await backend.pool.query(
        'SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ? ORDER BY 1',
        [`${namespace}\\_%`],
      )) as unknown as [{ name: string }[]];
      expect(rows.map((r) => r.name)).toEqual(inNamespace(readmeTables('mysql'), namespace));
    } finally {
      await kv.close?.();
      await mysqlServer.dropAndClose(backend);
    }
  });
});
