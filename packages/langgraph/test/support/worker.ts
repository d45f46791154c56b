/**
 * The graph worker in a child process: the test bundles `graph-worker.ts` once with esbuild
 * (workspace packages resolved to their sources) and runs it with plain node.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { bundleWorker } from '../../../../vitest.aliases.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));
// Inside the package, so that node finds the drivers and LangGraph from the bundle.
const outfile = here('../.build/graph-worker.mjs');

let built: Promise<string> | undefined;

function workerScript(): Promise<string> {
  built ??= (async () => {
    mkdirSync(here('../.build'), { recursive: true });
    await bundleWorker({
      entry: here('./graph-worker.ts'),
      outfile,
      external: ['better-sqlite3', 'pg', 'mysql2', 'mysql2/*', 'ioredis', '@langchain/*'],
      // The worker uses only the contract suite's service helpers, which need no vitest.
      overrides: { '@ckpt/contract-tests': here('../../../../contract-tests/src/services.ts') },
    });
    return outfile;
  })();
  return built;
}

/** Run one phase in a new process and return the JSON it printed. */
export async function runPhase(args: string[]): Promise<unknown> {
  const child = spawn(process.execPath, [await workerScript(), ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let out = '';
  let err = '';
  child.stdout.setEncoding('utf8').on('data', (chunk: string) => {
    out += chunk;
  });
  child.stderr.setEncoding('utf8').on('data', (chunk: string) => {
    err += chunk;
  });
  const code = await new Promise<number | null>((resolve) => child.on('close', resolve));
  if (code !== 0) throw new Error(`worker ${args.join(' ')} exited with ${code}: ${err}`);
  return JSON.parse(out.trim().split('\n').at(-1)!);
}
