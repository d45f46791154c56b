/**
 * A store opened from a URL lets the process exit once its calls are done, without close():
 * the pool it opens lets its idle connections go (pg's allowExitOnIdle). The script runs in a
 * process of its own; once it has printed its result, the test waits a bounded time for it to
 * exit, shorter than the 10 s after which pg would close an idle connection anyway, and fails
 * if it is still there.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { describe, expect, it } from 'vitest';
import { bundleWorker } from '../../../vitest.aliases.js';
import { available, dropSchema, freshNamespace, url } from './support.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
/** How long after its last call the script may take to exit: half of pg's idle timeout. */
const EXIT_WITHIN_MS = 5_000;

describe.skipIf(!available)('a script on a postgres store opened from a URL', () => {
  it('exits by itself after its last call, without close()', async () => {
    // Inside the package, so that node finds pg from the bundle.
    mkdirSync(here('./.build'), { recursive: true });
    const script = await bundleWorker({
      entry: here('./exit-when-idle/script.ts'),
      outfile: here('./.build/exit-when-idle.mjs'),
      external: ['pg'],
    });
    const namespace = freshNamespace();
    try {
      const child = spawn(process.execPath, [script, url, namespace], {
        stdio: ['ignore', 'pipe', 'pipe'],
      });
      let out = '';
      let err = '';
      child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
        err += chunk;
      });
      const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
      // The bounded wait starts once the script has written its checkpoint and printed it.
      await new Promise<void>((resolve) => {
        child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
          out += chunk;
          if (out.includes('\n')) resolve();
        });
        void exited.then(() => resolve());
      });
      let timer: NodeJS.Timeout | undefined;
      const ended = await Promise.race([
        exited.then((code) => ({ code })),
        new Promise<'still running'>((resolve) => {
          timer = setTimeout(() => resolve('still running'), EXIT_WITHIN_MS);
        }),
      ]);
      clearTimeout(timer);
      if (ended === 'still running') child.kill('SIGKILL');
      expect(ended, `the script's output: ${out} ${err}`).toEqual({ code: 0 });
      expect(JSON.parse(out.trim())).toEqual({ seq: 1 });
    } finally {
      await dropSchema(namespace);
    }
  }, 60_000);
});
