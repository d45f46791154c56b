/**
 * A KvStore in the versioned form (getWithVersion and setIfVersion, no compareAndSet), as a
 * store that compares revisions has it, which counts the calls made to it and can hold one
 * back: for tests of what kvBackend asks of such a store, and of appends that meet each other.
 */
import type { KvStore } from '../../src/index.js';

type Method = 'get' | 'set' | 'delete' | 'getWithVersion' | 'setIfVersion' | 'list';

export function versionedKv() {
  const values = new Map<string, { value: string; version: number }>();
  let version = 0;
  const calls: Method[] = [];
  /** A call to hold: the next one for which `when` is true waits for the returned release. */
  let hold: {
    when: (method: Method, key: string) => boolean;
    reached: () => void;
    until: Promise<void>;
  } | null = null;
  const call = async (method: Method, key: string) => {
    calls.push(method);
    const gate = hold;
    if (gate?.when(method, key)) {
      hold = null;
      gate.reached();
      await gate.until;
    }
  };
  const kv: KvStore = {
    async get(key) {
      await call('get', key);
      return values.get(key)?.value;
    },
    async set(key, value) {
      await call('set', key);
      values.set(key, { value, version: ++version });
    },
    async delete(key) {
      await call('delete', key);
      return values.delete(key);
    },
    async getWithVersion(key) {
      await call('getWithVersion', key);
      const found = values.get(key);
      return found && { ...found };
    },
    async setIfVersion(key, value, expected) {
      await call('setIfVersion', key);
      if ((values.get(key)?.version ?? null) !== expected) return false;
      values.set(key, { value, version: ++version });
      return true;
    },
    async list(prefix, options) {
      await call('list', prefix);
      return [...values.keys()]
        .filter((key) => key.startsWith(prefix) && key > (options?.after ?? ''))
        .sort()
        .slice(0, options?.limit ?? Infinity);
    },
  };
  return {
    kv,
    values,
    /** The calls made since the last `counted()`, and a fresh count from here. */
    counted(): Method[] {
      return calls.splice(0);
    },
    /** Hold the next call `when` picks; resolves with its release once it is waiting. */
    holdNext(when: (method: Method, key: string) => boolean): Promise<() => void> {
      return new Promise((resolve) => {
        let release = () => {};
        const until = new Promise<void>((go) => (release = go));
        hold = { when, reached: () => resolve(release), until };
      });
    },
  };
}
