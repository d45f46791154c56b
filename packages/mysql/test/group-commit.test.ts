/**
 * Group commit (opt-in on MySQL): while every connection of the pool is busy, the checkpoints
 * that wait for one go together, in one CALL and one transaction, each with its own outcome.
 */
import {
  expectOnlyTheRefusedCallOfABatchFails,
  poolBatchCases,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore } from '@ckpt/core';
import { type MysqlBackend, mysql } from '@ckpt/mysql';
import mysql2, { type Pool } from 'mysql2/promise';
import { afterEach, describe, expect, it } from 'vitest';
import { available, dropAndClose, freshNamespace, url } from './support.js';

const opened: { backend: MysqlBackend; pool: Pool }[] = [];
afterEach(async () => {
  for (const { backend, pool } of opened.splice(0)) {
    await dropAndClose(backend);
    await pool.end();
  }
});

/** A backend with groupCommit on, on a pool of `connections` (to `at`), migrated. */
async function onPool(connections: number, at = url, preparedStatements = true) {
  const pool = mysql2.createPool({ uri: at, connectionLimit: connections });
  const backend = mysql({
    pool,
    namespace: freshNamespace(),
    groupCommit: true,
    preparedStatements,
  });
  opened.push({ backend, pool });
  await backend.ready();
  return { backend, pool };
}

describe.skipIf(!available)('mysql group commit', () => {
  poolBatchCases({
    url,
    defaultPort: 3306,
    async open(connections, options) {
      const { backend } = await onPool(connections, options?.url);
      const store = new CheckpointStore(backend, { maxPayloadBytes: options?.maxPayloadBytes });
      return { store, batched: () => backend.batched };
    },
  });

  it('batches nothing by default', async () => {
    const pool = mysql2.createPool({ uri: url, connectionLimit: 2 });
    const backend = mysql({ pool, namespace: freshNamespace() });
    opened.push({ backend, pool });
    const store = new CheckpointStore(backend);
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.checkpoint(`s${i}`, i)));
    expect(backend.batched).toEqual({ batches: 0, calls: 0 });
    for (let i = 0; i < 20; i++) expect((await store.load(`s${i}`))?.data).toBe(i);
  });

  it('undoes only the call of a batch that the server refuses, and commits the others', async () => {
    const { backend, pool } = await onPool(1);
    await pool.query(`
      CREATE TRIGGER ${backend.namespace}_refuse_poison BEFORE INSERT ON ${backend.namespace}_checkpoints
      FOR EACH ROW BEGIN
        IF NEW.session_id = 'poison' THEN SIGNAL SQLSTATE '45000' SET MESSAGE_TEXT = 'poison refused'; END IF;
      END`);
    const store = new CheckpointStore(backend);
    await expectOnlyTheRefusedCallOfABatchFails({ store, batched: () => backend.batched });
  });

  it("carries each call's tags: set, cleared or left as they were; a refused call's not at all", async () => {
    const { backend } = await onPool(1);
    const store = new CheckpointStore(backend);
    for (const id of ['set', 'cleared', 'left', 'refused']) {
      await store.checkpoint(id, 0, { tags: { user: 'ann' } });
    }
    const before = backend.batched;
    const outcomes = await Promise.allSettled([
      store.checkpoint('first', 1),
      store.checkpoint('set', 1, { tags: { user: 'bob', status: 'open' } }),
      store.checkpoint('cleared', 1, { tags: {} }),
      store.checkpoint('left', 1),
      store.checkpoint('refused', 1, { tags: { user: 'bob' }, expectedHead: 7 }),
      store.checkpoint('new', 1, { tags: { user: 'bob' } }),
    ]);
    expect(outcomes.map((o) => o.status)).toEqual([
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'fulfilled',
      'rejected',
      'fulfilled',
    ]);
    expect(backend.batched.calls - before.calls).toBe(5);
    const tagsOf = async (id: string) => (await store.info(id))?.tags;
    expect(await tagsOf('set')).toEqual({ status: 'open', user: 'bob' });
    expect(await tagsOf('cleared')).toEqual({});
    expect(await tagsOf('left')).toEqual({ user: 'ann' });
    expect(await tagsOf('refused')).toEqual({ user: 'ann' });
    const found = async (where: Record<string, string>) =>
      (await store.sessions({ where })).items.map((s) => s.sessionId).sort();
    expect(await found({ user: 'bob' })).toEqual(['new', 'set']);
    expect(await found({ user: 'ann' })).toEqual(['left', 'refused']);
  });

  // As text, each value's bytes go as hex, twice as long: the batch is measured as it is sent.
  it.each([true, false])(
    'sends a batch too large for one packet one call at a time (preparedStatements: %s)',
    async (prepared) => {
      const { backend } = await onPool(1, url, prepared);
      const store = new CheckpointStore(backend);
      // Calls of 4 MiB each, waiting together, would not fit the server's packet as one CALL.
      const big = 'x'.repeat(4 * 1024 * 1024);
      const written = await Promise.all(
        Array.from({ length: 8 }, (_, i) => store.checkpoint(`big-${i}`, `${i}${big}`)),
      );
      expect(written.map((cp) => cp.seq)).toEqual(Array(8).fill(1));
      for (let i = 0; i < 8; i++) expect((await store.load(`big-${i}`))?.data).toBe(`${i}${big}`);
    },
  );
});
