/**
 * Group commit: while every connection of the pool is busy, the checkpoints that wait for one
 * go together, in one statement and one transaction, each with its own outcome.
 */
import {
  expectOnlyTheRefusedCallOfABatchFails,
  poolBatchCases,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore } from '@ckpt/core';
import { type PostgresBackend, postgres } from '@ckpt/postgres';
import pg from 'pg';
import { afterEach, describe, expect, it } from 'vitest';
import { available, dropAndClose, freshNamespace, url } from './support.js';

const opened: { backend: PostgresBackend; pool: pg.Pool }[] = [];
afterEach(async () => {
  for (const { backend, pool } of opened.splice(0)) {
    await dropAndClose(backend);
    await pool.end();
  }
});

/** A backend on a pool of `connections` (to `at`), migrated. */
async function onPool(connections: number, groupCommit = true, at = url) {
  const pool = new pg.Pool({ connectionString: at, max: connections });
  pool.on('error', () => {});
  const backend = postgres({ pool, namespace: freshNamespace(), groupCommit });
  opened.push({ backend, pool });
  await backend.ready();
  return { backend, pool };
}

describe.skipIf(!available)('postgres group commit', () => {
  poolBatchCases({
    url,
    defaultPort: 5432,
    async open(connections, options) {
      const { backend } = await onPool(connections, true, options?.url);
      const store = new CheckpointStore(backend, { maxPayloadBytes: options?.maxPayloadBytes });
      return { store, batched: () => backend.batched };
    },
  });

  it('batches nothing with groupCommit: false', async () => {
    const { backend } = await onPool(2, false);
    const store = new CheckpointStore(backend);
    await Promise.all(Array.from({ length: 20 }, (_, i) => store.checkpoint(`s${i}`, i)));
    expect(backend.batched).toEqual({ batches: 0, calls: 0 });
    for (let i = 0; i < 20; i++) expect((await store.load(`s${i}`))?.data).toBe(i);
  });

  // The server refuses a batch statement whole, as it refuses any statement: then nothing of
  // it was stored, and each call goes alone, so that only the one at fault fails.
  it.each([
    ['as it inserts', 'BEFORE INSERT', 'NEW'],
    ['at COMMIT', 'AFTER INSERT', 'NULL'],
  ])(
    'runs each call of a batch alone when the server refuses one %s: only that one fails',
    async (_, when, returns) => {
      const { backend, pool } = await onPool(1);
      const ns = `"${backend.namespace}"`;
      const deferred = when.startsWith('AFTER') ? 'CONSTRAINT' : '';
      await pool.query(`
      CREATE FUNCTION ${ns}.refuse_poison() RETURNS trigger LANGUAGE plpgsql AS $$
      BEGIN
        IF NEW.session_id = 'poison' THEN RAISE EXCEPTION 'poison refused'; END IF;
        RETURN ${returns};
      END $$;
      CREATE ${deferred} TRIGGER refuse_poison ${when} ON ${ns}.checkpoints
        ${deferred ? 'DEFERRABLE INITIALLY DEFERRED' : ''}
        FOR EACH ROW EXECUTE FUNCTION ${ns}.refuse_poison();`);
      const store = new CheckpointStore(backend);
      await expectOnlyTheRefusedCallOfABatchFails({ store, batched: () => backend.batched });
    },
  );

  it('writes one checkpoint for calls of one batch that share an idempotency key', async () => {
    const { backend } = await onPool(1);
    const store = new CheckpointStore(backend);
    const written = await Promise.all(
      Array.from({ length: 6 }, (_, i) =>
        store.checkpoint(i % 2 ? 'one' : 'two', { i }, { idempotencyKey: 'k' }),
      ),
    );
    expect(backend.batched.calls).toBeGreaterThan(1);
    expect(new Set(written.filter((cp) => cp.sessionId === 'one').map((cp) => cp.seq))).toEqual(
      new Set([1]),
    );
    expect(new Set(written.filter((cp) => cp.sessionId === 'two').map((cp) => cp.seq))).toEqual(
      new Set([1]),
    );
    expect(await store.info('one')).toMatchObject({ checkpoints: 1 });
    expect(await store.info('two')).toMatchObject({ checkpoints: 1 });
  });
});
