import { defineConfig } from 'vitest/config';

// Its own config, so that it runs the same inside this repository and as a project of its own.
export default defineConfig({
  test: { include: ['test/**/*.test.ts'], testTimeout: 60_000 },
});
