/**
 * better-sqlite3 installed without its compiled part (an install whose build step failed or
 * was skipped): opening a store says which package and what to do, in a CkptError.
 */
import { execFileSync } from 'node:child_process';
import { cpSync, mkdirSync, mkdtempSync, realpathSync, rmSync, symlinkSync } from 'node:fs';
import { createRequire } from 'node:module';
import { tmpdir } from 'node:os';
import { dirname, join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { expect, it } from 'vitest';
import { bundleWorker } from '../../../vitest.aliases.js';

const require = createRequire(import.meta.url);

it('names better-sqlite3 and says to rebuild it when its compiled part is missing', async () => {
  const app = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-binding-'));
  try {
    // The package as an install that did not build leaves it: its JavaScript, no build/.
    const driver = dirname(require.resolve('better-sqlite3/package.json'));
    const copy = join(app, 'node_modules', 'better-sqlite3');
    mkdirSync(copy, { recursive: true });
    for (const part of ['package.json', 'lib'])
      cpSync(join(driver, part), join(copy, part), { recursive: true });
    const bindings = realpathSync(
      createRequire(join(driver, 'lib', 'database.js')).resolve('bindings/package.json'),
    );
    symlinkSync(dirname(bindings), join(app, 'node_modules', 'bindings'), 'dir');

    const script = join(app, 'open.mjs');
    await bundleWorker({
      entry: fileURLToPath(new URL('./support/open-memory.ts', import.meta.url)),
      outfile: script,
      external: ['better-sqlite3'],
    });
    const printed = execFileSync(process.execPath, [script], { cwd: app, encoding: 'utf8' });
    const results = printed
      .trim()
      .split('\n')
      .map((line) => JSON.parse(line));
    expect(results).toHaveLength(2);
    for (const result of results) {
      expect(result.code).toBe('UNSUPPORTED');
      expect(result.details).toEqual({ package: 'better-sqlite3' });
      expect(result.message).toMatch(
        /^sqlite\(\) cannot load the compiled part of better-sqlite3 \(Could not locate the bindings file\. Tried:\): it was installed without it, or for another Node\.js\. Run 'npm rebuild better-sqlite3' in your application's directory/,
      );
      expect(result.message).toContain('needs Python, make and a C++ compiler');
    }
  } finally {
    rmSync(app, { recursive: true, force: true });
  }
});
