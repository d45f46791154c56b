import { fileURLToPath } from 'node:url';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Each workspace import and the TypeScript source it stands for. */
const SOURCES: Record<string, string> = {
  '@ckpt/core': './packages/core/src/index.ts',
  '@ckpt/core/adapter': './packages/core/src/adapter.ts',
  '@ckpt/core/sql': './packages/core/src/sql/index.ts',
  '@ckpt/memory': './packages/memory/src/index.ts',
  '@ckpt/sqlite': './packages/sqlite/src/index.ts',
  '@ckpt/postgres': './packages/postgres/src/index.ts',
  '@ckpt/redis': './packages/redis/src/index.ts',
  '@ckpt/mysql': './packages/mysql/src/index.ts',
  '@ckpt/contract-tests': './contract-tests/src/index.ts',
};

/** Each workspace import and the absolute path of its TypeScript source. */
export const workspaceSources: Record<string, string> = Object.fromEntries(
  Object.entries(SOURCES).map(([name, path]) => [name, src(path)]),
);

/**
 * Workspace packages resolve to their TypeScript sources, so tests need no build first. Each
 * matches its whole specifier only, so that `@ckpt/core` does not swallow `@ckpt/core/sql`.
 */
export const workspaceAliases = Object.entries(workspaceSources).map(([name, path]) => ({
  find: new RegExp(`^${name.replace(/\//g, '\\/')}$`),
  replacement: path,
}));
