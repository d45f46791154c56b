/**
 * The suite lets a backend's timers run: a case whose loops only await calls answered at once
 * would hold the event loop, so that a write waiting for a timer never lands and not even the
 * case's timeout fires. It runs such a case in a child vitest, on a correct KV whose writes
 * wait for a timer, and fails if the child has not finished after a bounded wait.
 */
import { spawn } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';

interface JsonReport {
  testResults: { assertionResults: { fullName: string; status: string }[] }[];
}

const root = fileURLToPath(new URL('../..', import.meta.url));
/** Far longer than the case takes; reached only when it hangs. */
const HANG_AFTER_MS = 120_000;

/** Run vitest on the timer-writes fixture for the cases named `pattern`; false if it hung. */
function runChild(pattern: string, outputFile: string): Promise<boolean> {
  const vitest = join(root, 'node_modules/vitest/vitest.mjs');
  const config = join(root, 'contract-tests/test/fixtures/timer-writes.config.ts');
  // A process group of its own, so that a hung child and its workers can all be ended.
  const child = spawn(
    process.execPath,
    [
      vitest,
      'run',
      '--config',
      config,
      '-t',
      pattern,
      '--reporter=json',
      `--outputFile=${outputFile}`,
    ],
    { cwd: root, detached: true, stdio: 'ignore' },
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      process.kill(-child.pid!, 'SIGKILL');
      resolve(false);
    }, HANG_AFTER_MS);
    child.on('error', reject);
    child.on('exit', () => {
      clearTimeout(timer);
      resolve(true);
    });
  });
}

it(
  'finishes the race of readers against checkpoints and prunes on a KV whose writes wait for a timer',
  async () => {
    const dir = mkdtempSync(join(tmpdir(), 'ckpt-timer-writes-'));
    try {
      const out = join(dir, 'report.json');
      const name = 'reads the head whole while checkpoints and prunes race';
      expect(await runChild(name, out), 'the case finished').toBe(true);
      const report = JSON.parse(readFileSync(out, 'utf8')) as JsonReport;
      const ran = report.testResults
        .flatMap((file) => file.assertionResults)
        .filter((r) => r.status !== 'skipped' && r.status !== 'pending');
      expect(ran.map((r) => [r.fullName.includes(name), r.status])).toEqual([[true, 'passed']]);
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  },
  HANG_AFTER_MS + 30_000,
);
