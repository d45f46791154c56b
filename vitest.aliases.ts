import { renameSync } from 'node:fs';
import { fileURLToPath, pathToFileURL } from 'node:url';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Each workspace import and the TypeScript source it stands for. */
const SOURCES: Record<string, string> = {
  '@ckpt/core': './packages/core/src/index.ts',
  '@ckpt/core/adapter': './packages/core/src/adapter.ts',
  '@ckpt/core/sql': './packages/core/src/sql/index.ts',
  '@ckpt/memory': './packages/memory/src/index.ts',
  '@ckpt/sqlite': './packages/sqlite/src/index.ts',
  '@ckpt/postgres': './packages/postgres/src/index.ts',
  '@ckpt/pglite': './packages/pglite/src/index.ts',
  '@ckpt/redis': './packages/redis/src/index.ts',
  '@ckpt/mysql': './packages/mysql/src/index.ts',
  '@ckpt/langgraph': './packages/langgraph/src/index.ts',
  '@ckpt/contract-tests': './contract-tests/src/index.ts',
  '@ckpt/contract-tests/servers': './contract-tests/src/servers.ts',
  '@ckpt/openai-agents': './packages/openai-agents/src/index.ts',
  '@ckpt/ai-sdk': './packages/ai-sdk/src/index.ts',
  '@ckpt/cli': './packages/cli/src/index.ts',
  '@ckpt/test-servers': './test-servers/src/index.ts',
  '@ckpt/test-stores': './test-stores/src/index.ts',
  '@ckpt/test-stores/worker': './test-stores/src/worker.ts',
  '@ckpt/test-stores/browser': './test-stores/src/browser.ts',
  '@ckpt/test-stores/upgrade': './test-stores/src/upgrade.ts',
  '@ckpt/studio-app/wire': './studio-app/src/wire.ts',
};

/** Each workspace import and the absolute path of its TypeScript source. */
export const workspaceSources: Record<string, string> = Object.fromEntries(
  Object.entries(SOURCES).map(([name, path]) => [name, src(path)]),
);

/**
 * `@ckpt/sqlite`'s writer thread runs a script of its own, which the build puts beside the
 * package's entry points; from the sources, the tests run this bundle of it instead, which the
 * global setup (vitest.setup.ts) writes once a run. Inside the package, so that node finds
 * better-sqlite3 from it.
 */
export const sqliteWriterBundle = src('./packages/sqlite/test/.build/writer-thread.mjs');

/** The module of @ckpt/sqlite's sources that names the writer thread's script. */
const WRITER_SCRIPT = /^\.\/writer-script\.js$/;

/**
 * Workspace packages resolve to their TypeScript sources, so tests need no build first. Each
 * matches its whole specifier only, so that `@ckpt/core` does not swallow `@ckpt/core/sql`.
 */
export const workspaceAliases = [
  ...Object.entries(workspaceSources).map(([name, path]) => ({
    find: new RegExp(`^${name.replace(/\//g, '\\/')}$`),
    replacement: path,
  })),
  { find: WRITER_SCRIPT, replacement: src('./packages/sqlite/test/support/writer-script.ts') },
];

/** Bundle @ckpt/sqlite's writer thread into `sqliteWriterBundle`, replacing it whole. */
export async function bundleSqliteWriter(): Promise<void> {
  const temporary = `${sqliteWriterBundle}.${process.pid}.tmp`;
  await bundleWorker({
    entry: src('./packages/sqlite/src/worker.ts'),
    outfile: temporary,
    external: ['better-sqlite3'],
  });
  renameSync(temporary, sqliteWriterBundle);
}

/**
 * Bundle a test's child-process script `entry` into `outfile`, with workspace packages (and
 * `overrides`) taken from their sources and `external` packages left for node to load from
 * next to `outfile`. Returns `outfile`.
 */
export async function bundleWorker(options: {
  entry: string;
  outfile: string;
  external: string[];
  overrides?: Record<string, string>;
}): Promise<string> {
  const { build } = await import('esbuild');
  const sources = { ...workspaceSources, ...options.overrides };
  await build({
    entryPoints: [options.entry],
    outfile: options.outfile,
    bundle: true,
    platform: 'node',
    format: 'esm',
    target: 'node20',
    external: options.external,
    plugins: [
      {
        name: 'workspace sources',
        setup(bundle) {
          bundle.onResolve({ filter: /^@ckpt\// }, ({ path }) =>
            sources[path] ? { path: sources[path] } : undefined,
          );
          // A bundle that opens a SQLite store runs the writer thread's bundle, by its path.
          bundle.onResolve({ filter: WRITER_SCRIPT }, ({ path }) => ({
            path,
            namespace: 'writer-script',
          }));
          bundle.onLoad({ filter: /.*/, namespace: 'writer-script' }, () => ({
            contents: `export const writerScript = new URL(${JSON.stringify(pathToFileURL(sqliteWriterBundle).href)});`,
          }));
        },
      },
    ],
    logLevel: 'error',
  });
  return options.outfile;
}
