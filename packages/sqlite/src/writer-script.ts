/**
 * The writer thread's script: built beside this package's entry points (tsup's `worker`
 * entry). Run from its TypeScript sources (the bench runs them through tsx, after building
 * every package), the thread runs the build's script, since node starts a thread without the
 * loader that runs TypeScript. The tests, which run the sources without a build, put a bundle
 * of worker.ts in place of this module (see vitest.aliases.ts).
 */
export const writerScript: URL = new URL(
  import.meta.url.endsWith('.ts') ? '../dist/worker.js' : './worker.js',
  import.meta.url,
);
