/** `create: false` on MySQL / MariaDB: opening only a namespace that has its tables, writing nothing. */
import { CheckpointStore, isCkptError, kvBackend, openStore } from '@ckpt/core';
import { mysql, mysqlKv, SCHEMA_VERSION } from '@ckpt/mysql';
import mysql2 from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
import { writeOldSchema } from './old-schemas.js';
import { available, dropNamespace, freshNamespace, url } from './support.js';

const admin = mysql2.createPool({ uri: url, connectionLimit: 2 });
const made: string[] = [];
afterAll(async () => {
  for (const namespace of made) await dropNamespace(namespace);
  await admin.end();
});

function namespace(): string {
  const ns = freshNamespace();
  made.push(ns);
  return ns;
}

async function failure(promise: Promise<unknown>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isCkptError(err), String(err)).toBe(true);
  return err as Error & { code: string };
}

/** The names of the tables and procedures of namespace `ns`. */
async function objectsOf(ns: string): Promise<string[]> {
  const [rows] = (await admin.query(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?
     UNION ALL
     SELECT routine_name FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name LIKE ?
     ORDER BY 1`,
    [`${ns}\\_%`, `${ns}\\_%`],
  )) as unknown as [{ name: string }[]];
  return rows.map((row) => row.name);
}

describe.skipIf(!available)('mysql({ create: false })', () => {
  it('refuses a namespace without tables with NOT_FOUND naming the URL and the namespace, and creates nothing', async () => {
    const ns = namespace();
    const backend = mysql({ url, namespace: ns, create: false });
    const err = await failure(backend.ready());
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toBe(
      `there is no ckpt store in namespace '${ns}' at ${url} (it holds no ckpt tables); check the URL and the namespace, or open it without { create: false } to create a new store there.`,
    );
    await failure(new CheckpointStore(backend).checkpoint('s', 1));
    await backend.close();
    expect(await objectsOf(ns)).toEqual([]);
  });

  it('opens a store that exists, to read and write it', async () => {
    const ns = namespace();
    const first = new CheckpointStore(mysql({ url, namespace: ns }));
    await first.checkpoint('s', { step: 1 });
    await first.close();
    const store = new CheckpointStore(mysql({ url, namespace: ns, create: false }));
    expect((await store.load('s'))?.data).toEqual({ step: 1 });
    await store.checkpoint('s', { step: 2 });
    expect(await store.head('s')).toBe(2);
    await store.close();
  });

  it('refuses a namespace at an older version with SCHEMA and does not upgrade it', async () => {
    const ns = namespace();
    await writeOldSchema(admin, ns, 2);
    const before = await objectsOf(ns);
    const backend = mysql({ url, namespace: ns, create: false });
    const err = await failure(backend.ready());
    expect(err.code).toBe('SCHEMA');
    expect(err.message).toMatch(
      new RegExp(
        `^namespace '${ns}' at .* has ckpt schema version 2, older than the ${SCHEMA_VERSION} this @ckpt/mysql uses.*open it once without \\{ create: false \\}`,
      ),
    );
    await backend.close();
    const [meta] = (await admin.query(`SELECT value FROM ${ns}_meta`)) as unknown as [unknown[]];
    expect(meta).toEqual([{ value: '2' }]);
    expect(await objectsOf(ns)).toEqual(before);
    const [columns] = (await admin.query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'head_created_at'`,
      [`${ns}_sessions`],
    )) as unknown as [unknown[]];
    expect(columns).toEqual([]);
  });

  it('holds mysqlKv to the same rule', async () => {
    const ns = namespace();
    const kv = mysqlKv({ url, namespace: ns, create: false });
    expect((await failure(kv.get('k'))).code).toBe('NOT_FOUND');
    await kv.close?.();
    expect(await objectsOf(ns)).toEqual([]);
    await kvBackend(mysqlKv({ url, namespace: ns })).close();
    const again = mysqlKv({ url, namespace: ns, create: false });
    expect(await again.get('k')).toBeUndefined();
    await again.close?.();
  });

  it('makes openStore reject a misspelt namespace with NOT_FOUND, creating nothing', async () => {
    const ns = namespace();
    const err = await failure(openStore(`${url}?namespace=${ns}`, { create: false }));
    expect(err.code).toBe('NOT_FOUND');
    expect(await objectsOf(ns)).toEqual([]);
  });
});
