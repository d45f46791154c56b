/**
 * `pnpm test:fast`: the tier for the edit-test loop, with no server. Core, memory, SQLite,
 * kvBackend and the suite itself, the CLI on what needs no server, and the studio's page; the
 * servers' tests, the integrations (each run on every backend) and the browser tests are the
 * full run's.
 */
import { defineConfig } from 'vitest/config';
import base from './vitest.config.js';

// Spread, not mergeConfig, which would add these lists to the full run's instead.
export default defineConfig({
  ...base,
  test: {
    ...base.test,
    include: [
      'packages/core/test/**/*.test.ts',
      'packages/memory/test/**/*.test.ts',
      'packages/sqlite/test/**/*.test.ts',
      'contract-tests/test/**/*.test.ts',
      'packages/cli/test/**/*.test.ts',
      'studio-app/test/**/*.test.ts',
    ],
    // A browser, and PGlite (seconds to start), are the full run's.
    exclude: [
      'packages/cli/test/studio-browser.test.ts',
      'packages/cli/test/pglite-url.test.ts',
      '**/node_modules/**',
    ],
    env: { CKPT_SERVICES: 'none' },
    reporters: ['default'],
  },
});
