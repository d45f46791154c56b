/** `create: false` on PostgreSQL: opening only a schema that holds the store, writing nothing. */
import { CheckpointStore, isCkptError, kvBackend, openStore } from '@ckpt/core';
import { postgres, postgresKv, SCHEMA_VERSION } from '@ckpt/postgres';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { writeOldSchema } from './old-schemas.js';
import { available, freshNamespace, url } from './support.js';

const admin = new pg.Pool({ connectionString: url, max: 2 });
const made: string[] = [];
afterAll(async () => {
  for (const namespace of made) await admin.query(`DROP SCHEMA IF EXISTS ${namespace} CASCADE`);
  await admin.end();
});

/** A namespace this file drops when it is done. */
function namespace(): string {
  const ns = freshNamespace();
  made.push(ns);
  return ns;
}

/** The rejection of `promise`, a CkptError. */
async function failure(promise: Promise<unknown>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isCkptError(err), String(err)).toBe(true);
  return err as Error & { code: string };
}

const schemaExists = async (ns: string) =>
  (await admin.query('SELECT FROM pg_namespace WHERE nspname = $1', [ns])).rowCount === 1;
const tablesIn = async (ns: string) =>
  (await admin.query('SELECT tablename FROM pg_tables WHERE schemaname = $1', [ns])).rows;

describe.skipIf(!available)('postgres({ create: false })', () => {
  it('refuses a schema that does not exist with NOT_FOUND naming the URL without its password, and creates no schema', async () => {
    const ns = namespace();
    const withPassword = url.replace('://postgres@', '://postgres:s3cret@');
    const backend = postgres({ url: withPassword, namespace: ns, create: false });
    const err = await failure(backend.ready());
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toBe(
      `there is no ckpt store in schema '${ns}' at ${withPassword.replace('s3cret', '***')} (it holds no ckpt tables); check the URL and the namespace, or open it without { create: false } to create a new store there.`,
    );
    await failure(new CheckpointStore(backend).checkpoint('s', 1));
    await backend.close();
    expect(await schemaExists(ns)).toBe(false);
  });

  it('refuses a schema an administrator made but ckpt never used with NOT_FOUND, creating no table in it', async () => {
    const ns = namespace();
    await admin.query(`CREATE SCHEMA ${ns}`);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const backend = postgres({ pool, namespace: ns, create: false });
    const err = await failure(backend.ready());
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toMatch(
      / at the given pool \(it holds no ckpt tables\); check the namespace,/,
    );
    await backend.close();
    await pool.end();
    expect(await tablesIn(ns)).toEqual([]);
  });

  it('opens a store that exists, to read and write it', async () => {
    const ns = namespace();
    const first = new CheckpointStore(postgres({ url, namespace: ns }));
    await first.checkpoint('s', { step: 1 });
    await first.close();
    const store = new CheckpointStore(postgres({ url, namespace: ns, create: false }));
    expect((await store.load('s'))?.data).toEqual({ step: 1 });
    await store.checkpoint('s', { step: 2 });
    expect(await store.head('s')).toBe(2);
    await store.close();
  });

  it('refuses a schema at an older version with SCHEMA and does not upgrade it', async () => {
    const ns = namespace();
    await writeOldSchema(admin, ns, 3);
    const before = await tablesIn(ns);
    const backend = postgres({ url, namespace: ns, create: false });
    const err = await failure(backend.ready());
    expect(err.code).toBe('SCHEMA');
    expect(err.message).toMatch(
      new RegExp(
        `^schema '${ns}' at .* has ckpt schema version 3, older than the ${SCHEMA_VERSION} this @ckpt/postgres uses.*open it once without \\{ create: false \\}`,
      ),
    );
    await backend.close();
    const meta = await admin.query(`SELECT value FROM ${ns}.meta WHERE key = 'schema_version'`);
    expect(meta.rows).toEqual([{ value: '3' }]);
    const upgraded = await admin.query(
      `SELECT FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'head_created_at'`,
      [ns],
    );
    expect(upgraded.rowCount).toBe(0);
    expect(await tablesIn(ns)).toEqual(before);
  });

  it('holds postgresKv to the same rule', async () => {
    const ns = namespace();
    const kv = postgresKv({ url, namespace: ns, create: false });
    expect((await failure(kv.get('k'))).code).toBe('NOT_FOUND');
    await kv.close?.();
    expect(await schemaExists(ns)).toBe(false);
    const made = kvBackend(postgresKv({ url, namespace: ns }));
    await made.close();
    const again = postgresKv({ url, namespace: ns, create: false });
    expect(await again.get('k')).toBeUndefined();
    await again.close?.();
  });

  it('makes openStore reject a misspelt namespace with NOT_FOUND, creating nothing', async () => {
    const ns = namespace();
    const err = await failure(openStore(`${url}?namespace=${ns}`, { create: false }));
    expect(err.code).toBe('NOT_FOUND');
    expect(err.message).toContain(`schema '${ns}'`);
    expect(await schemaExists(ns)).toBe(false);
  });
});
