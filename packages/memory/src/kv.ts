/** An in-memory `KvStore` with every optional capability, for tests and as a model for authors. */
import { compareCodePoints, type KvStore } from '@ckpt/core';
import { checkMemoryOptions, type MemoryOptions } from './options.js';

/** An in-memory KvStore (get, set, delete, compareAndSet, list). */
export function memoryKv(options: MemoryOptions = {}): KvStore {
  checkMemoryOptions(options, 'memoryKv');
  const values = new Map<string, string>();
  return {
    async get(key) {
      return values.get(key);
    },
    async set(key, value) {
      values.set(key, value);
    },
    async delete(key) {
      return values.delete(key);
    },
    async compareAndSet(key, expected, value) {
      if ((values.get(key) ?? null) !== expected) return false;
      values.set(key, value);
      return true;
    },
    async list(prefix, { after, limit = Number.POSITIVE_INFINITY } = {}) {
      return [...values.keys()]
        .filter(
          (k) => k.startsWith(prefix) && (after === undefined || compareCodePoints(k, after) > 0),
        )
        .sort(compareCodePoints)
        .slice(0, limit);
    },
  };
}
