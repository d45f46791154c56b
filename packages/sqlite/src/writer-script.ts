/**
 * The writer thread's script: built beside this package's entry points (tsup's `worker`
 * entry). The tests, which run this package from its TypeScript sources, put a bundle of
 * worker.ts in its place.
 */
export const writerScript: URL = new URL('./worker.js', import.meta.url);
