/** Stores lent to a command run in-process: it may close them, and the test's stay open. */
import { type CheckpointBackend, CheckpointStore } from '@ckpt/core';

/** A store on `store`'s backend that the command may close, leaving the test's open. */
export function lent(store: CheckpointStore): CheckpointStore {
  return new CheckpointStore(
    new Proxy(store.backend, {
      get(target, property) {
        if (property === 'close') return async () => {};
        const value = Reflect.get(target, property, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    }),
  );
}

/** `lent(store)`, with each call of the backend's `method` made through `around`. */
export function lentAround(
  store: CheckpointStore,
  method: keyof CheckpointBackend,
  around: (call: () => unknown) => unknown,
): CheckpointStore {
  return new CheckpointStore(
    new Proxy(lent(store).backend, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (property !== method) return value;
        return (...args: unknown[]) =>
          around(() => (value as (...a: unknown[]) => unknown).apply(target, args));
      },
    }),
  );
}
