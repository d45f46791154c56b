/**
 * completeBackend: a native backend writes only what core cannot derive; its capabilities
 * follow from its methods. (The contract suite runs whole on such a backend: see
 * contract-tests/test/reference.test.ts.)
 */
import { memory, memoryKv } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import { capabilitiesOf, completeBackend } from '../src/adapter.js';
import { type CheckpointBackend, CheckpointStore, isCkptError, kvBackend } from '../src/index.js';

/** memory() without `left` (bound to it, so that its private fields are there). */
function without(left: readonly string[]): CheckpointBackend {
  const full = memory();
  const view: Record<string, unknown> = { name: 'partial', capabilities: {} };
  for (const key of Object.getOwnPropertyNames(Object.getPrototypeOf(full))) {
    const value = (full as unknown as Record<string, unknown>)[key];
    if (key !== 'constructor' && !left.includes(key) && typeof value === 'function') {
      view[key] = value.bind(full);
    }
  }
  return view as unknown as CheckpointBackend;
}

describe('completeBackend', () => {
  it('calls a backend that has every method and says what they show as it is', () => {
    const backend = memory();
    expect(completeBackend(backend)).toBe(backend);
    const kv = kvBackend(memoryKv());
    expect(completeBackend(kv)).toBe(kv);
  });

  it('leaves the listings out of kvBackend on a KV without list(), and keeps tags', () => {
    const values = new Map<string, string>();
    const kv = kvBackend({
      get: async (key) => values.get(key),
      set: async (key, value) => void values.set(key, value),
      delete: async (key) => values.delete(key),
    });
    expect(['sessions', 'stateKeys', 'stateScopes'].filter((method) => method in kv)).toEqual([]);
    // Tags are kept with each session (info, export, fork), whether or not they can be listed.
    expect(typeof kv.setTags).toBe('function');
    expect(completeBackend(kv).capabilities).toEqual({
      concurrentWriters: false,
      listSessions: false,
      listStateKeys: false,
      watch: false,
      tags: true,
    });
  });

  it('takes the listings from the methods, and concurrentWriters from what is declared', () => {
    expect(capabilitiesOf(without([]))).toEqual({
      concurrentWriters: false,
      listSessions: true,
      listStateKeys: true,
      watch: true,
      tags: true,
    });
    expect(capabilitiesOf(without(['sessions', 'stateScopes', 'changes', 'setTags']))).toEqual({
      concurrentWriters: false,
      listSessions: false,
      listStateKeys: false,
      watch: false,
      tags: false,
    });
  });

  it('derives listCheckpoints, lineage and fork from the methods a backend has', async () => {
    const store = new CheckpointStore(without(['listCheckpoints', 'lineage', 'fork']));
    for (let i = 1; i <= 3; i++) await store.checkpoint('s', { step: i }, { transcript: [i] });
    await store.pin('s', 2);
    expect((await store.list('s')).items.map((cp) => cp.seq)).toEqual([3, 2, 1]);
    expect(await store.history('s')).toEqual([1, 2, 3]);
    expect((await store.transcript('s')).items.map((entry) => entry.item)).toEqual([3, 2, 1]);
    expect(await store.fork('s', { atSeq: 2, newId: 'f' })).toBe('f');
    expect((await store.list('f')).items.map((cp) => [cp.seq, cp.pinned])).toEqual([
      [2, false],
      [1, false],
    ]);
    expect((await store.info('f'))?.forkedFrom).toEqual({ sessionId: 's', seq: 2 });
    expect((await store.checkpoint('f', { step: 'next' })).seq).toBe(3);
  });

  it('refuses a listing the backend lacks with UNSUPPORTED, naming the method', async () => {
    const store = new CheckpointStore(without(['sessions']));
    expect(store.capabilities.listSessions).toBe(false);
    const err = await store.sessions().catch((e: unknown) => e);
    expect(isCkptError(err) && err.code).toBe('UNSUPPORTED');
    const direct = await completeBackend(without(['sessions']))
      .sessions({ after: null, limit: 1, prefix: '' })
      .catch((e: unknown) => e);
    expect((direct as Error).message).toMatch(
      /needs the 'listSessions' capability \(sessions\(\) of a native backend/,
    );
  });
});
