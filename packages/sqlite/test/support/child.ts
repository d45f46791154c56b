/**
 * Child processes for the multi-process tests: the test bundles `worker.ts` once with
 * esbuild (workspace packages resolved to their sources) and runs it with plain node.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorker } from '../../../../vitest.aliases.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
// Inside the package, so that node finds better-sqlite3 from the bundle.
const outfile = here('../.build/worker.mjs');

let built: Promise<string> | undefined;

/** Bundle the worker (once per test file) and return its path. */
export function workerScript(): Promise<string> {
  built ??= (async () => {
    mkdirSync(here('../.build'), { recursive: true });
    await bundleWorker({ entry: here('./worker.ts'), outfile, external: ['better-sqlite3'] });
    return outfile;
  })();
  return built;
}

/** Start a worker with `args`; `onLine` receives each line it prints. */
export async function startWorker(
  args: string[],
  onLine: (line: string) => void = () => {},
): Promise<ChildProcess> {
  const child = spawn(process.execPath, [await workerScript(), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let buffer = '';
  child.stdout?.setEncoding('utf8').on('data', (chunk: string) => {
    buffer += chunk;
    let nl = buffer.indexOf('\n');
    while (nl !== -1) {
      onLine(buffer.slice(0, nl));
      buffer = buffer.slice(nl + 1);
      nl = buffer.indexOf('\n');
    }
  });
  return child;
}

/** Wait for a worker to exit; resolves with its exit code and stderr. */
export function exited(
  child: ChildProcess,
): Promise<{ code: number | null; signal: string | null; stderr: string }> {
  let stderr = '';
  child.stderr?.setEncoding('utf8').on('data', (chunk: string) => {
    stderr += chunk;
  });
  return new Promise((resolve) => {
    child.on('exit', (code, signal) => resolve({ code, signal, stderr }));
  });
}
