/**
 * Holding a backend's calls until it is ready. A backend that must first find (or migrate) its
 * namespace, asynchronously, may not let a call reach storage before that is done: with
 * `create: false`, a write to a namespace that turns out not to exist would create it.
 */
import type { CheckpointBackend } from './backend.js';

/**
 * The members that run at once whatever `ready` does: they reach no stored value, and those a
 * store calls as it is made, or a caller reads at once (`onEncryptedValues`, `leftovers`), answer
 * synchronously.
 */
const NOT_HELD = new Set<PropertyKey>([
  'ready',
  'close',
  'errorHint',
  'constructor',
  'onEncryptedValues',
  'leftovers',
]);

/**
 * `backend`, with every method but those of NOT_HELD held until `ready`
 * resolves, and failing with its error when it rejects. Each runs on `backend` itself, so a
 * class with private fields works as it is; other members read through.
 */
export function afterReady<B extends CheckpointBackend>(backend: B, ready: Promise<void>): B {
  // Reported by the calls that wait for it, not as an unhandled rejection.
  ready.catch(() => {});
  return new Proxy(backend, {
    get(target, key) {
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      if (NOT_HELD.has(key)) return value.bind(target);
      return async (...args: unknown[]) => {
        await ready;
        return value.apply(target, args);
      };
    },
  });
}
