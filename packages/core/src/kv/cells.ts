/**
 * Conditional writes on a KvStore, whatever it compares: a version it keeps beside each value
 * (`getWithVersion` and `setIfVersion`), the value itself (`compareAndSet`), or, with neither,
 * a read before the write that only one writer per session makes safe.
 */
import type { KvStore } from './kv-store.js';

/**
 * A value as read, with what a conditional write over it must present: the store's version
 * where it keeps versions, else the value itself.
 */
export interface Cell {
  value: string;
  version: unknown;
}

export interface Cells {
  /** The key's value with its version, or undefined when absent. */
  read(key: string): Promise<Cell | undefined>;
  /** Write `value` only if the key still holds `from` (null: only if absent); true when written. */
  swap(key: string, from: Cell | null, value: string): Promise<boolean>;
  /** Write `value` only if the key's value is `expected` (null: absent), as `compareAndSet` says. */
  swapValue(key: string, expected: string | null, value: string): Promise<boolean>;
  /** Whether writers racing on one key are safe: the store compares for itself. */
  atomic: boolean;
}

export function cellsOf(kv: KvStore): Cells {
  const { getWithVersion, setIfVersion, compareAndSet } = kv;
  if (getWithVersion && setIfVersion) {
    const read = (key: string) => getWithVersion.call(kv, key);
    const swap = (key: string, from: Cell | null, value: string) =>
      setIfVersion.call(kv, key, value, from === null ? null : from.version);
    return {
      read,
      swap,
      async swapValue(key, expected, value) {
        const cell = await read(key);
        if ((cell?.value ?? null) !== expected) return false;
        return swap(key, cell ?? null, value);
      },
      atomic: true,
    };
  }
  const swapValue = async (key: string, expected: string | null, value: string) => {
    if (compareAndSet) return compareAndSet.call(kv, key, expected, value);
    const current = (await kv.get(key)) ?? null;
    if (current !== expected) return false;
    await kv.set(key, value);
    return true;
  };
  return {
    async read(key) {
      const value = await kv.get(key);
      return value === undefined ? undefined : { value, version: value };
    },
    swap: (key, from, value) => swapValue(key, from === null ? null : from.value, value),
    swapValue,
    atomic: compareAndSet !== undefined,
  };
}
