/**
 * `pnpm test:fast`: the tier for the edit-test loop, everything that runs in the test's own
 * process: core, memory, SQLite (its writer thread too), kvBackend, the suite itself, the CLI
 * in process (`main(argv)`), and the studio's page. What needs a server, a browser or a child
 * process is the full run's: the servers' tests and the integrations (each run on every
 * backend), the browser tests, and the tests that spawn the `ckpt` binary, another Node.js
 * process or a child vitest.
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
    exclude: [
      // A browser, and PGlite (seconds to start).
      'packages/cli/test/studio-browser.test.ts',
      'packages/cli/test/pglite-url.test.ts',
      // The `ckpt` binary, spawned.
      'packages/cli/test/binary*.test.ts',
      'packages/cli/test/command-line.test.ts',
      'packages/cli/test/existing-store.test.ts',
      'packages/cli/test/keys.test.ts',
      'packages/cli/test/readme.test.ts',
      'packages/cli/test/rekey-leftovers.test.ts',
      'packages/cli/test/studio-http.test.ts',
      'packages/cli/test/terminal.test.ts',
      // Other Node.js processes, and child vitest runs.
      'packages/sqlite/test/binding.test.ts',
      'packages/sqlite/test/processes.test.ts',
      'contract-tests/test/broken.test.ts',
      'contract-tests/test/yielding.test.ts',
      '**/node_modules/**',
    ],
    env: { CKPT_SERVICES: 'none' },
    reporters: ['default'],
  },
});
