/** `create: false` on PostgreSQL: opening only a schema that holds the store, writing nothing. */
import { expectCkptError } from '@ckpt/contract-tests';
import {
  type ExistingStoreStorage,
  expectExistingStoreOpens,
  expectMissingStoreNotFound,
} from '@ckpt/contract-tests/servers';
import { kvBackend, openStore } from '@ckpt/core';
import { postgres, postgresKv, SCHEMA_VERSION } from '@ckpt/postgres';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { writeOldSchema } from './old-schemas.js';
import { adminPool, available, namespaceToDrop, schemaContents, url } from './support.js';

const contents = schemaContents;

/** The backend on `at`, and the KV store as a backend. */
const backend = (at = url): ExistingStoreStorage => ({
  open: (namespace, create) => postgres({ url: at, namespace, create }),
  contents,
});
const kv: ExistingStoreStorage = {
  open: (namespace, create) => kvBackend(postgresKv({ url, namespace, create })),
  contents,
};

describe.skipIf(!available)('postgres({ create: false })', () => {
  it('refuses a schema that does not exist with NOT_FOUND naming the URL without its password, and creates no schema', async () => {
    const ns = namespaceToDrop();
    const withPassword = url.replace('://postgres@', '://postgres:s3cret@');
    const err = await expectMissingStoreNotFound(backend(withPassword), ns);
    expect(err.message).toBe(
      `there is no ckpt store in schema '${ns}' at ${withPassword.replace('s3cret', '***')} (it holds no ckpt tables); check the URL and the namespace, or open it without { create: false } to create a new store there.`,
    );
    expect(await contents(ns)).toEqual([]);
  });

  it('refuses a schema an administrator made but ckpt never used with NOT_FOUND, creating no table in it', async () => {
    const ns = namespaceToDrop();
    await adminPool().query(`CREATE SCHEMA ${ns}`);
    const pool = new pg.Pool({ connectionString: url, max: 1 });
    const err = await expectMissingStoreNotFound(
      { open: (namespace, create) => postgres({ pool, namespace, create }), contents },
      ns,
    );
    expect(err.message).toMatch(
      / at the given pool \(it holds no ckpt tables\); check the namespace,/,
    );
    await pool.end();
    expect(await contents(ns)).toEqual([ns]);
  });

  it('opens a store that exists, to read and write it', () =>
    expectExistingStoreOpens(backend(), namespaceToDrop()));

  it('refuses a schema at an older version with SCHEMA and does not upgrade it', async () => {
    const ns = namespaceToDrop();
    await writeOldSchema(adminPool(), ns, 3);
    const before = await contents(ns);
    const old = postgres({ url, namespace: ns, create: false });
    const err = await expectCkptError(old.ready(), 'SCHEMA');
    expect(err.message).toMatch(
      new RegExp(
        `^schema '${ns}' at .* has ckpt schema version 3, older than the ${SCHEMA_VERSION} this @ckpt/postgres uses.*open it once without \\{ create: false \\}`,
      ),
    );
    await old.close();
    const meta = await adminPool().query(`SELECT value FROM ${ns}.meta`);
    expect(meta.rows).toEqual([{ value: '3' }]);
    const upgraded = await adminPool().query(
      `SELECT FROM information_schema.columns WHERE table_schema = $1 AND column_name = 'head_created_at'`,
      [ns],
    );
    expect(upgraded.rowCount).toBe(0);
    expect(await contents(ns)).toEqual(before);
  });

  it('holds postgresKv to the same rule', async () => {
    await expectMissingStoreNotFound(kv, namespaceToDrop());
    await expectExistingStoreOpens(kv, namespaceToDrop());
  });

  it('makes openStore reject a misspelt namespace with NOT_FOUND, creating nothing', async () => {
    const ns = namespaceToDrop();
    const err = await expectCkptError(
      openStore(`${url}?namespace=${ns}`, { create: false }),
      'NOT_FOUND',
    );
    expect(err.message).toContain(`schema '${ns}'`);
    expect(await contents(ns)).toEqual([]);
  });
});
