/** Test backends made from a real one with some members replaced. */
import type { CheckpointBackend } from '../../src/index.js';

/** `inner` with `overrides` in place of some of its members; the others are its own, bound to it. */
export function around(
  inner: CheckpointBackend,
  overrides: Partial<Record<keyof CheckpointBackend, unknown>>,
): CheckpointBackend {
  return new Proxy(inner, {
    get(target, key) {
      if (key in overrides) return overrides[key as keyof CheckpointBackend];
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
