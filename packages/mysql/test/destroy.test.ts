/** `destroy()` on MySQL / MariaDB: the namespace's tables and procedures go, others stay. */
import { CheckpointStore, isCkptError } from '@ckpt/core';
import { mysql, mysqlKv } from '@ckpt/mysql';
import mysql2 from 'mysql2/promise';
import { afterAll, describe, expect, it } from 'vitest';
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

/** The names of the tables and procedures that start with `prefix`. */
async function objectsOf(prefix: string): Promise<string[]> {
  const like = `${prefix.replaceAll('_', '\\_')}%`;
  const [rows] = (await admin.query(
    `SELECT table_name AS name FROM information_schema.tables WHERE table_schema = DATABASE() AND table_name LIKE ?
     UNION ALL
     SELECT routine_name FROM information_schema.routines WHERE routine_schema = DATABASE() AND routine_name LIKE ?
     ORDER BY 1`,
    [like, like],
  )) as unknown as [{ name: string }[]];
  return rows.map((row) => row.name);
}

/** A store in `ns` with a session, state and a KV entry. */
async function filled(ns: string): Promise<CheckpointStore> {
  const kv = mysqlKv({ url, namespace: ns });
  await kv.set('k', 'v');
  await kv.close?.();
  const store = new CheckpointStore(mysql({ url, namespace: ns }));
  await store.checkpoint('s', 1, { transcript: ['t'], idempotencyKey: 'k' });
  await store.state('x').set('k', 1);
  return store;
}

describe.skipIf(!available)('destroy() on mysql', () => {
  it("drops every table and procedure of the namespace, the KV store's and the meta table included", async () => {
    const ns = namespace();
    const store = await filled(ns);
    expect(await objectsOf(`${ns}_`)).toContain(`${ns}_append`);
    await store.destroy();
    expect(await objectsOf(`${ns}_`)).toEqual([]);
  });

  it('leaves another namespace, even one whose name starts with this one, as it was', async () => {
    const ns = namespace();
    const other = `${ns}_x`;
    made.push(other);
    const kept = await filled(other);
    const keptObjects = await objectsOf(`${other}_`);
    const store = await filled(ns);
    await store.destroy();
    expect(await objectsOf(`${other}_`)).toEqual(keptObjects);
    expect((await kept.load('s'))?.data).toBe(1);
    await kept.close();
  });

  it('leaves nothing a new store in the namespace would see, and NOT_FOUND for create: false', async () => {
    const ns = namespace();
    const store = await filled(ns);
    await store.destroy();
    const missing = mysql({ url, namespace: ns, create: false });
    expect(isCkptError(await missing.ready().catch((e: unknown) => e), 'NOT_FOUND')).toBe(true);
    await missing.close();
    const again = new CheckpointStore(mysql({ url, namespace: ns }));
    expect((await again.sessions()).items).toEqual([]);
    expect(await again.state('x').get('k')).toBeUndefined();
    await again.close();
  });
});
