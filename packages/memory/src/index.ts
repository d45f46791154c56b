/**
 * The in-memory backend and KV store: the reference implementation, for tests and demos.
 *
 * @packageDocumentation
 * @module @ckpt/memory
 */
import { MemoryBackend, type MemoryOptions } from './memory-backend.js';

export { MemoryBackend, type MemoryOptions } from './memory-backend.js';
export { memoryKv } from './memory-kv.js';

/** The in-memory native backend; share one instance between stores to share their data. */
export function memory(options: MemoryOptions = {}): MemoryBackend {
  return new MemoryBackend(options);
}
