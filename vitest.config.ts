import { defineConfig } from 'vitest/config';
import { workspaceAliases } from './vitest.aliases.js';

export default defineConfig({
  resolve: { alias: workspaceAliases },
  test: {
    include: [
      'packages/*/test/**/*.test.ts',
      'contract-tests/test/**/*.test.ts',
      'composition-tests/test/**/*.test.ts',
      'examples/*/test/**/*.test.ts',
      'studio-app/test/**/*.test.ts',
      'test/**/*.test.ts',
    ],
    // LangGraph's checkpointer validation suite calls describe/it/expect as globals.
    globals: true,
    globalSetup: ['./vitest.setup.ts'],
    // Two test files at once: most of a file's time is spent waiting on a server or an fsync.
    maxWorkers: 2,
    testTimeout: 60_000,
    hookTimeout: 60_000,
    // expect.poll waits for a page (or a server) to show a change; on a busy machine that can
    // take longer than vitest's default second, which is no fault of what is tested.
    expect: { poll: { timeout: 15_000 } },
    // The JSON report is what CI counts from (.ci/summary.mjs).
    reporters: ['default', ['json', { outputFile: 'test-results/vitest.json' }]],
  },
});
