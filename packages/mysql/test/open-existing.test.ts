/** `create: false` on MySQL / MariaDB: opening only a namespace that has its tables, writing nothing. */
import { expectCkptError } from '@ckpt/contract-tests';
import {
  type ExistingStoreStorage,
  expectExistingStoreOpens,
  expectMissingStoreNotFound,
} from '@ckpt/contract-tests/servers';
import { kvBackend, openStore } from '@ckpt/core';
import { mysql, mysqlKv, SCHEMA_VERSION } from '@ckpt/mysql';
import { describe, expect, it } from 'vitest';
import { writeOldSchema } from './old-schemas.js';
import { adminPool, available, namespaceObjects, namespaceToDrop, url } from './support.js';

const contents = namespaceObjects;

const backend: ExistingStoreStorage = {
  open: (namespace, create) => mysql({ url, namespace, create }),
  contents,
};
const kv: ExistingStoreStorage = {
  open: (namespace, create) => kvBackend(mysqlKv({ url, namespace, create })),
  contents,
};

describe.skipIf(!available)('mysql({ create: false })', () => {
  it('refuses a namespace without tables with NOT_FOUND naming the URL and the namespace, and creates nothing', async () => {
    const ns = namespaceToDrop();
    const err = await expectMissingStoreNotFound(backend, ns);
    expect(err.message).toBe(
      `there is no ckpt store in namespace '${ns}' at ${url} (it holds no ckpt tables); check the URL and the namespace, or open it without { create: false } to create a new store there.`,
    );
    expect(await contents(ns)).toEqual([]);
  });

  it('opens a store that exists, to read and write it', () =>
    expectExistingStoreOpens(backend, namespaceToDrop()));

  it('refuses a namespace at an older version with SCHEMA and does not upgrade it', async () => {
    const ns = namespaceToDrop();
    await writeOldSchema(adminPool(), ns, 2);
    const before = await contents(ns);
    const old = mysql({ url, namespace: ns, create: false });
    const err = await expectCkptError(old.ready(), 'SCHEMA');
    expect(err.message).toMatch(
      new RegExp(
        `^namespace '${ns}' at .* has ckpt schema version 2, older than the ${SCHEMA_VERSION} this @ckpt/mysql uses.*open it once without \\{ create: false \\}`,
      ),
    );
    await old.close();
    const [meta] = (await adminPool().query(`SELECT value FROM ${ns}_meta`)) as unknown as [
      unknown[],
    ];
    expect(meta).toEqual([{ value: '2' }]);
    expect(await contents(ns)).toEqual(before);
    const [columns] = (await adminPool().query(
      `SELECT column_name FROM information_schema.columns WHERE table_schema = DATABASE() AND table_name = ? AND column_name = 'head_created_at'`,
      [`${ns}_sessions`],
    )) as unknown as [unknown[]];
    expect(columns).toEqual([]);
  });

  it('holds mysqlKv to the same rule', async () => {
    await expectMissingStoreNotFound(kv, namespaceToDrop());
    await expectExistingStoreOpens(kv, namespaceToDrop());
  });

  it('makes openStore reject a misspelt namespace with NOT_FOUND, creating nothing', async () => {
    const ns = namespaceToDrop();
    await expectCkptError(openStore(`${url}?namespace=${ns}`, { create: false }), 'NOT_FOUND');
    expect(await contents(ns)).toEqual([]);
  });
});
