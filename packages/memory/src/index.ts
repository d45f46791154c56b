/**
 * The in-memory backend and KV store: the reference implementation, for tests and demos.
 *
 * @packageDocumentation
 * @module @ckpt/memory
 */
import { MemoryBackend } from './backend.js';
import type { MemoryOptions } from './options.js';

export { MemoryBackend } from './backend.js';
export { memoryKv } from './kv.js';
export type { MemoryOptions } from './options.js';

/** The in-memory native backend; share one instance between stores to share their data. */
export function memory(options: MemoryOptions = {}): MemoryBackend {
  return new MemoryBackend(options);
}
