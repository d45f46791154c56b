/** A backend as one written before tags would be: the same storage, without `setTags`. */
import type { CheckpointBackend } from '@ckpt/core';

/** `backend` without `setTags` (so without the `tags` capability), its other methods its own. */
export function withoutTags(backend: CheckpointBackend): CheckpointBackend {
  return new Proxy(backend, {
    get(target, key) {
      if (key === 'setTags') return undefined;
      const value = Reflect.get(target, key, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}
