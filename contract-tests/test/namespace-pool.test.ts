/** The pool that lets a server adapter's contract run use namespaces again. */

import { namespacePool } from '@ckpt/contract-tests/servers';
import type { CheckpointBackend } from '@ckpt/core';
import { memory } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';

/** A server of namespaces, each a list of rows, that logs what the pool asks of it. */
function fakeStorage() {
  const namespaces = new Map<string, string[]>();
  const log: string[] = [];
  let made = 0;
  return {
    namespaces,
    log,
    storage: {
      fresh: () => `ns${made++}`,
      empty: async (ns: string) => {
        log.push(`empty ${ns}`);
        namespaces.set(ns, []);
      },
      drop: async (ns: string) => {
        log.push(`drop ${ns}`);
        namespaces.delete(ns);
      },
    },
  };
}

describe('namespacePool', () => {
  it('hands out a new namespace while none is spare, and an emptied one after a release', async () => {
    const { storage, namespaces, log } = fakeStorage();
    const pool = namespacePool(storage);
    const first = pool.take();
    const second = pool.take();
    expect(second).not.toBe(first);
    namespaces.set(first, ['a row']);
    await pool.release(first);
    expect(namespaces.get(first)).toEqual([]);
    expect(pool.take()).toBe(first);
    expect(log).toEqual([`empty ${first}`]);
  });

  it('empties a namespace once however many connections release it', async () => {
    const { storage, log } = fakeStorage();
    const pool = namespacePool(storage);
    const ns = pool.take();
    await pool.release(ns);
    await pool.release(ns);
    await pool.release(ns);
    expect(log).toEqual([`empty ${ns}`]);
    expect(pool.take()).toBe(ns);
    expect(pool.take()).not.toBe(ns);
  });

  it('drops a namespace it did not hand out instead of keeping it', async () => {
    const { storage, log } = fakeStorage();
    const pool = namespacePool(storage);
    await pool.release('someone_elses');
    expect(log).toEqual(['drop someone_elses']);
    expect(pool.take()).not.toBe('someone_elses');
  });

  it('drops every namespace it made, spare or still taken, and starts over afterwards', async () => {
    const { storage, log } = fakeStorage();
    const pool = namespacePool(storage);
    const spare = pool.take();
    const taken = pool.take();
    await pool.release(spare);
    await pool.dropAll();
    expect(log.filter((line) => line.startsWith('drop')).sort()).toEqual(
      [`drop ${spare}`, `drop ${taken}`].sort(),
    );
    expect([spare, taken]).not.toContain(pool.take());
  });

  it('gives a harness whose backends open in its namespaces and give them back when destroyed', async () => {
    const { storage, log } = fakeStorage();
    const pool = namespacePool(storage);
    const opened: { namespace: string; backend: CheckpointBackend; closed: boolean }[] = [];
    const harness = pool.harness((namespace) => {
      const backend = memory({ namespace: 'x' });
      const entry = { namespace, backend, closed: false };
      backend.close = async () => {
        entry.closed = true;
      };
      opened.push(entry);
      return backend;
    });

    const first = await harness.create();
    const second = await harness.connect(first);
    const isolated = await harness.namespaced(first, 'other');
    expect(opened.map((entry) => entry.namespace)).toEqual([
      opened[0]!.namespace,
      opened[0]!.namespace,
      'other',
    ]);
    for (const backend of [isolated, second, first]) await harness.destroy(backend);
    expect(opened.every((entry) => entry.closed)).toBe(true);
    expect(log).toEqual(['drop other', `empty ${opened[0]!.namespace}`]);

    await harness.create();
    expect(opened[3]!.namespace).toBe(opened[0]!.namespace);
  });
});
