/** `destroy()` on PostgreSQL: its own schema dropped whole, a schema made for it left standing. */
import { CheckpointStore, isCkptError, kvBackend } from '@ckpt/core';
import { postgres, postgresKv } from '@ckpt/postgres';
import pg from 'pg';
import { afterAll, describe, expect, it } from 'vitest';
import { available, freshNamespace, url } from './support.js';

const admin = new pg.Pool({ connectionString: url, max: 2 });
const made: string[] = [];
afterAll(async () => {
  for (const namespace of made) await admin.query(`DROP SCHEMA IF EXISTS ${namespace} CASCADE`);
  await admin.end();
});

function namespace(): string {
  const ns = freshNamespace();
  made.push(ns);
  return ns;
}

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

const schemaExists = async (ns: string) =>
  (await admin.query('SELECT FROM pg_namespace WHERE nspname = $1', [ns])).rowCount === 1;
const objectsIn = async (ns: string) =>
  (
    await admin.query(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
       UNION ALL
       SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1
       ORDER BY 1`,
      [ns],
    )
  ).rows.map((row) => row.name as string);

describe.skipIf(!available)('destroy() on postgres', () => {
  it('drops a schema ckpt created, whole, and leaves another namespace as it was', async () => {
    const [ns, other] = [namespace(), namespace()];
    const kept = await filled(other);
    const keptObjects = await objectsIn(other);
    const store = await filled(ns);
    await store.destroy();
    expect(await schemaExists(ns)).toBe(false);
    expect(await objectsIn(other)).toEqual(keptObjects);
    expect((await kept.load('s'))?.data).toBe(1);
    expect(await kept.state('x').get('k')).toBe(1);
    await kept.close();
  });

  it("drops only ckpt's tables and functions from a schema an administrator made, which stays with its own table", async () => {
    const ns = namespace();
    await admin.query(`CREATE SCHEMA ${ns}`);
    await admin.query(`CREATE TABLE ${ns}.reports (id int)`);
    await admin.query(
      `CREATE FUNCTION ${ns}.report_count() RETURNS int LANGUAGE sql AS 'SELECT 1'`,
    );
    const store = await filled(ns);
    expect((await objectsIn(ns)).length).toBeGreaterThan(3);
    await store.destroy();
    expect(await schemaExists(ns)).toBe(true);
    expect(await objectsIn(ns)).toEqual(['report_count', 'reports']);
  });

  it('leaves nothing a new store in the namespace would see, and NOT_FOUND for create: false', async () => {
    const ns = namespace();
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
    const store = new CheckpointStore(postgres({ pool, namespace: namespace() }));
    await store.checkpoint('s', 1);
    await store.destroy();
    expect((await pool.query('SELECT 1 AS one')).rows).toEqual([{ one: 1 }]);
    await pool.end();
    const owned = postgres({ url, namespace: namespace() });
    await new CheckpointStore(owned).destroy();
    expect(owned.pool.ended).toBe(true);
  });
});
