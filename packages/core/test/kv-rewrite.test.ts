/** kvBackend's rewriteCheckpoint beside an append whose body is written but not yet committed. */
import { createHash } from 'node:crypto';
import { describe, expect, it } from 'vitest';
import { CheckpointStore, encrypt, type KvStore, kvBackend } from '../src/index.js';

const KEY1 = createHash('sha256').update('first').digest();
const KEY2 = createHash('sha256').update('second').digest();
const sealedWith = (current: 'k1' | 'k2') => ({
  codecs: [encrypt({ keys: { k1: KEY1, k2: KEY2 }, current })],
});

/** A sorted Map as a whole KvStore, whose next write of a checkpoint body waits for `release()`. */
function pausingKv() {
  const map = new Map<string, string>();
  let paused: { reached: () => void; until: Promise<void> } | null = null;
  let release = () => {};
  const waitIfPaused = async (key: string) => {
    const gate = paused;
    if (gate && key.startsWith('ckpt:c:')) {
      paused = null;
      gate.reached();
      await gate.until;
    }
  };
  const kv: KvStore = {
    get: async (key) => map.get(key),
    async set(key, value) {
      await waitIfPaused(key);
      map.set(key, value);
    },
    delete: async (key) => map.delete(key),
    async compareAndSet(key, expected, value) {
      await waitIfPaused(key);
      if ((map.get(key) ?? null) !== expected) return false;
      map.set(key, value);
      return true;
    },
    async list(prefix, options) {
      return [...map.keys()]
        .filter((key) => key.startsWith(prefix) && key > (options?.after ?? ''))
        .sort()
        .slice(0, options?.limit ?? Infinity);
    },
  };
  /** Pause the next write of a body; resolves once a write is waiting there. */
  const pauseNextBodyWrite = () =>
    new Promise<void>((reached) => {
      paused = { reached, until: new Promise<void>((go) => (release = go)) };
    });
  return { kv, map, pauseNextBodyWrite, release: () => release() };
}

describe('kvBackend rewriteCheckpoint', () => {
  it('leaves an append in flight whole, and is not undone when that append commits', async () => {
    const { kv, map, pauseNextBodyWrite, release } = pausingKv();
    const backend = kvBackend(kv);
    const old = new CheckpointStore(backend, sealedWith('k1'));
    await old.checkpoint('s', { n: 1 });
    // The append waits as it writes its body, before its record names it: the rewrite sees
    // only the first checkpoint, and the append then commits what its writer sealed.
    const reached = pauseNextBodyWrite();
    const appending = old.checkpoint('s', { n: 2 });
    await reached;
    const rotated = new CheckpointStore(backend, sealedWith('k2'));
    expect(await rotated.reencode()).toEqual({ checkpoints: 1, state: 0 });
    release();
    expect((await appending).seq).toBe(2);
    const bodies = new Map([...map].filter(([key]) => key.startsWith('ckpt:c:')));
    expect(bodies.size).toBe(2);
    const [first, second] = [...bodies.entries()].sort(([a], [b]) => a.localeCompare(b));
    expect(first![1]).toContain('aes-256-gcm:k2;');
    expect(second![1]).toContain('aes-256-gcm:k1;');
    expect((await rotated.load('s'))?.data).toEqual({ n: 2 });
    expect(await rotated.history('s')).toEqual([1, 2]);
    // A second pass seals what the first could not see.
    expect(await rotated.reencode()).toEqual({ checkpoints: 1, state: 0 });
    const onlyK2 = new CheckpointStore(backend, {
      codecs: [encrypt({ keys: { k2: KEY2 }, current: 'k2' })],
    });
    expect((await onlyK2.load('s', 1))?.data).toEqual({ n: 1 });
    expect((await onlyK2.load('s'))?.data).toEqual({ n: 2 });
  });
});
