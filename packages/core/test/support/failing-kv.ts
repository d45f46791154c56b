/** A KvStore cut short at one of its calls: for tests of a caller that stops half-way. */
import type { KvStore } from '../../src/index.js';

/**
 * `kv` failing its `n`th call from now (of any method it has): before the call reaches the
 * store, or, with `after`, once it did.
 */
export function failingAt(kv: KvStore, n: number, after: boolean): KvStore {
  let calls = 0;
  const wrap =
    <A extends unknown[], R>(method: (...args: A) => Promise<R>) =>
    async (...args: A): Promise<R> => {
      calls++;
      if (calls !== n) return method(...args);
      if (after) await method(...args);
      throw new Error(`cut short at call ${n}`);
    };
  const methods = [
    'get',
    'set',
    'delete',
    'compareAndSet',
    'getWithVersion',
    'setIfVersion',
    'list',
  ];
  const wrapped: Record<string, unknown> = {};
  for (const name of methods) {
    const method = (kv as unknown as Record<string, unknown>)[name];
    if (typeof method === 'function') {
      wrapped[name] = wrap((method as (...args: unknown[]) => Promise<unknown>).bind(kv));
    }
  }
  return wrapped as unknown as KvStore;
}
