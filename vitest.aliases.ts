import { fileURLToPath } from 'node:url';

const src = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Workspace packages resolve to their TypeScript sources, so tests need no build first. */
export const workspaceAliases = {
  '@ckpt/core': src('./packages/core/src/index.ts'),
  '@ckpt/memory': src('./packages/memory/src/index.ts'),
  '@ckpt/sqlite': src('./packages/sqlite/src/index.ts'),
  '@ckpt/postgres': src('./packages/postgres/src/index.ts'),
  '@ckpt/redis': src('./packages/redis/src/index.ts'),
  '@ckpt/mysql': src('./packages/mysql/src/index.ts'),
  '@ckpt/contract-tests': src('./contract-tests/src/index.ts'),
};
