/**
 * `ckpt studio` as a user runs it: the built command started as a child process, its printed
 * address read, and a headless Chromium (Debian's, driven by playwright-core) to look at it.
 */
import { type ChildProcess, spawn } from 'node:child_process';
import { CKPT } from './binary.js';

/** A running studio. */
export interface StudioProcess {
  /** The printed address, with its token. */
  url: string;
  origin: string;
  token: string;
  port: number;
  child: ChildProcess;
  /** What it wrote to stderr so far. */
  stderr(): string;
  /** Stop it (as Ctrl-C does) and wait for it to exit; resolves to its exit status. */
  stop(): Promise<number | null>;
}

/** Start `ckpt --store <store> studio --port 0 …args` and wait for its address. */
export function startStudio(store: string, args: string[] = []): Promise<StudioProcess> {
  const child = spawn(
    process.execPath,
    [CKPT, '--store', store, 'studio', '--port', '0', ...args],
    {
      stdio: ['ignore', 'pipe', 'pipe'],
    },
  );
  let out = '';
  let err = '';
  child.stderr!.on('data', (chunk: Buffer) => {
    err += chunk.toString();
  });
  const exited = new Promise<number | null>((resolve) =>
    child.once('exit', (code) => resolve(code)),
  );
  return new Promise((resolve, reject) => {
    const timer = setTimeout(() => {
      child.kill('SIGKILL');
      reject(new Error(`ckpt studio printed no address in 30 s; stderr: ${err}`));
    }, 30_000);
    const early = (code: number | null) => {
      clearTimeout(timer);
      reject(
        new Error(`ckpt studio exited with ${code} before printing its address; stderr: ${err}`),
      );
    };
    child.once('exit', early);
    child.stdout!.on('data', (chunk: Buffer) => {
      out += chunk.toString();
      const line = /^(http:\/\/[^\s]+)\n/m.exec(out);
      if (line === null) return;
      clearTimeout(timer);
      child.off('exit', early);
      const url = new URL(line[1]!);
      resolve({
        url: line[1]!,
        origin: url.origin,
        token: url.searchParams.get('token')!,
        port: Number(url.port),
        child,
        stderr: () => err,
        stop: async () => {
          if (child.exitCode === null) child.kill('SIGINT');
          return exited;
        },
      });
    });
  });
}

/** The Chromium the browser tests drive, and how they start it. */
export { CHROMIUM, chromiumFound, launchBrowser } from '@ckpt/test-stores/browser';
