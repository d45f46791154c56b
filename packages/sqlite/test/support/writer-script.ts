/** The writer thread's script when the tests run @ckpt/sqlite from its sources (see vitest.aliases.ts). */
export const writerScript: URL = new URL('../.build/writer-thread.mjs', import.meta.url);
