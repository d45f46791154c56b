/** The options of `memory()` and `memoryKv()`, checked alike. */
import { checkCreate, checkNamespace, checkOptions } from '@ckpt/core/adapter';

/** Options of `memory()` and `memoryKv()`. */
export interface MemoryOptions {
  /** Accepted for parity with the other backends; each instance is its own space anyway. */
  namespace?: string;
  /**
   * Accepted for parity with the other backends: a new instance is an empty store, so
   * `create: false` opens one as well.
   */
  create?: boolean;
}

/** Check `options` of `factory` (INVALID_ARGUMENT where one is bad); the namespace. */
export function checkMemoryOptions(options: MemoryOptions, factory: string): string {
  const given = checkOptions(options, 'options', ['namespace', 'create'], `${factory}()`);
  const namespace = checkNamespace(given.namespace);
  checkCreate(given.create, factory);
  return namespace;
}
