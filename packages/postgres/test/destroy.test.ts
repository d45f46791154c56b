/** `destroy()` on PostgreSQL: its own schema dropped whole, a schema made for it left standing. */
import { CheckpointStore, isCkptError, kvBackend } from '@ckpt/core';
import { postgres, postgresKv } from '@ckpt/postgres';
import pg from 'pg';
import { describe, expect, it } from 'vitest';
import { adminPool, available, namespaceToDrop, schemaContents, url } from './support.js';

/** A store in schema `ns` with a session, state and a KV entry. */
async function filled(ns: string): Promise<CheckpointStore> {
  const kv = postgresKv({ url, namespace: ns });
  await kv.set('k', 'v');
  await kv.close?.();
  const store = new CheckpointStore(postgres({ url, namespace: ns }));
  await store.checkpoint('s', 1, { transcript: ['t'], idempotencyKey: 'k' });
  await store.state('x').set('k', 1);
  return store;
}

describe.skipIf(!available)('destroy() on postgres', () => {
  it('drops a schema ckpt created, whole, and leaves another namespace as it was', async () => {
    const [ns, other] = [namespaceToDrop(), namespaceToDrop()];
    const kept = await filled(other);
    const keptObjects = await schemaContents(other);
    const store = await filled(ns);
    await store.destroy();
    expect(await schemaContents(ns)).toEqual([]);
    expect(await schemaContents(other)).toEqual(keptObjects);
    expect((await kept.load('s'))?.data).toBe(1);
    expect(await kept.state('x').get('k')).toBe(1);
    await kept.close();
  });

  it("drops only ckpt's tables and functions from a schema an administrator made, which stays with its own table", async () => {
    const ns = namespaceToDrop();
    await adminPool().query(`CREATE SCHEMA ${ns}`);
    await adminPool().query(`CREATE TABLE ${ns}.reports (id int)`);
    await adminPool().query(
      `CREATE FUNCTION ${ns}.report_count() RETURNS int LANGUAGE sql AS 'SELECT 1'`,
    );
    const store = await filled(ns);
    expect((await schemaContents(ns)).length).toBeGreaterThan(4);
    await store.destroy();
    expect(await schemaContents(ns)).toEqual(['report_count', 'reports', ns].sort());
  });

  it('leaves nothing a new store in the namespace would see, and NOT_FOUND for create: false', async () => {
    const ns = namespaceToDrop();
    const store = await filled(ns);
    await store.destroy();
    const missing = postgres({ url, namespace: ns, create: false });
    const err = await missing.ready().catch((e: unknown) => e);
    expect(isCkptError(err, 'NOT_FOUND')).toBe(true);
    await missing.close();
    const again = new CheckpointStore(postgres({ url, namespace: ns }));
    expect((await again.sessions()).items).toEqual([]);
    expect(await again.state('x').get('k')).toBeUndefined();
    const kv = kvBackend(postgresKv({ url, namespace: ns }));
    expect(await new CheckpointStore(kv).state('x').get('k')).toBeUndefined();
    await kv.close();
    await again.close();
  });

  it('closes a pool it opened and leaves a given pool open', async () => {
    const pool = new pg.Pool({ connectionString: url, max: 2 });
    const store = new CheckpointStore(postgres({ pool, namespace: namespaceToDrop() }));
    await store.checkpoint('s', 1);
    await store.destroy();
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
    const owned = postgres({ url, namespace: namespaceToDrop() });
    await new CheckpointStore(owned).destroy();
    expect(owned.pool.ended).toBe(true);
  });
});
