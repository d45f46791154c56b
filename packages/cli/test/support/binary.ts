/**
 * The built `ckpt` executable, as a user runs it: built first (with what it loads: core and
 * the adapters), then run as a child process.
 */
import { execFile, execFileSync } from 'node:child_process';
import { fileURLToPath } from 'node:url';

const root = fileURLToPath(new URL('../../../../', import.meta.url));

/** The executable. */
export const CKPT = fileURLToPath(new URL('../../dist/cli.js', import.meta.url));

/**
 * Build the CLI and every package it loads, through turbo (which takes them from its cache
 * when nothing changed, as in CI after `pnpm build`).
 */
export function buildCli(): void {
  execFileSync(
    `${root}node_modules/.bin/turbo`,
    ['run', 'build', '--filter=@ckpt/cli...', '--output-logs=errors-only'],
    { cwd: root, stdio: ['ignore', 'ignore', 'inherit'] },
  );
}

/** What a run printed, and its exit status. */
export interface Run {
  code: number;
  stdout: string;
  stderr: string;
}

/** Run `ckpt` with `args`, its stdin from `input`, in a pipe (no terminal). */
export function ckpt(
  args: string[],
  options: { env?: Record<string, string>; input?: string } = {},
): Promise<Run> {
  return new Promise((resolve) => {
    const child = execFile(
      process.execPath,
      [CKPT, ...args],
      { env: { ...process.env, ...options.env }, maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => {
        const code = err ? ((err as { code?: number }).code ?? 1) : 0;
        resolve({ code: typeof code === 'number' ? code : 1, stdout, stderr });
      },
    );
    child.stdin!.end(options.input ?? '');
  });
}
