/**
 * The example's server in a process of its own (test/support/serve.ts, bundled once with the
 * workspace packages from their sources), as a second server behind the same load balancer.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { fileURLToPath } from 'node:url';
import { bundleWorker } from '../../../../vitest.aliases.js';
import type { ServerOptions } from '../../src/server.js';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** A server process: its address, and how to stop it. */
export interface ServerProcess {
  url: string;
  close(): Promise<void>;
}

let script: Promise<string> | undefined;

/** Start the example's server with `options` in a new process. */
export async function startServerProcess(options: ServerOptions): Promise<ServerProcess> {
  script ??= bundleWorker({
    entry: here('./serve.ts'),
    // Inside the example, so that node finds its dependencies (`external`) from there.
    outfile: here('../../.build/serve.mjs'),
    external: ['better-sqlite3', 'ioredis', 'ai', 'ai/*', '@ai-sdk/*', 'zod', 'resumable-stream/*'],
  });
  const child = spawn(process.execPath, [await script, JSON.stringify(options)], {
    stdio: ['ignore', 'pipe', 'inherit'],
  });
  const [line] = (await Promise.race([
    once(createInterface({ input: child.stdout! }), 'line'),
    once(child, 'exit').then(([code]) => {
      throw new Error(`the server process exited with ${code} before it listened`);
    }),
  ])) as [string];
  const { url } = JSON.parse(line) as { url: string };
  return { url, close: () => stop(child) };
}

async function stop(child: ChildProcess): Promise<void> {
  if (child.exitCode !== null) return;
  const exited = once(child, 'exit');
  child.kill('SIGTERM');
  await exited;
}
