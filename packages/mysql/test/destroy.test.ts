/** `destroy()` on MySQL / MariaDB: the namespace's tables and procedures go, others stay. */
import { CheckpointStore, isCkptError } from '@ckpt/core';
import { mysql, mysqlKv } from '@ckpt/mysql';
import { describe, expect, it } from 'vitest';
import { available, namespaceObjects, namespaceToDrop, url } from './support.js';

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
    const ns = namespaceToDrop();
    const store = await filled(ns);
    expect(await namespaceObjects(ns)).toContain(`${ns}_append`);
    await store.destroy();
    expect(await namespaceObjects(ns)).toEqual([]);
  });

  it('leaves another namespace, even one whose name starts with this one, as it was', async () => {
    const ns = namespaceToDrop();
    // A namespace of its own that starts with this one's name; it goes with it afterwards.
    const other = `${ns}_x`;
    const kept = await filled(other);
    const keptObjects = await namespaceObjects(other);
    const store = await filled(ns);
    await store.destroy();
    expect(await namespaceObjects(other)).toEqual(keptObjects);
    expect((await kept.load('s'))?.data).toBe(1);
    await kept.close();
  });

  it('leaves nothing a new store in the namespace would see, and NOT_FOUND for create: false', async () => {
    const ns = namespaceToDrop();
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
