/**
 * Phases of an integration test in processes of their own, so that the next phase runs after
 * a real restart: a script is bundled once with esbuild (workspace packages from their
 * sources) and each phase runs it with plain node and reads the JSON line it prints.
 */
import { spawn } from 'node:child_process';
import { mkdirSync } from 'node:fs';
import { dirname } from 'node:path';
import { bundleWorker } from '../../vitest.aliases.js';

const DRIVERS = ['better-sqlite3', 'pg', 'mysql2', 'mysql2/*', 'ioredis'];

/**
 * A runner of the script `entry`, bundled into `outfile` (inside the package under test, so
 * that node finds its drivers and its framework, `external`, from there).
 */
export function phaseRunner(options: {
  entry: string;
  outfile: string;
  external: string[];
}): (args: string[]) => Promise<unknown> {
  let built: Promise<string> | undefined;
  const script = () => {
    built ??= (async () => {
      mkdirSync(dirname(options.outfile), { recursive: true });
      return bundleWorker({
        entry: options.entry,
        outfile: options.outfile,
        external: [...DRIVERS, ...options.external],
      });
    })();
    return built;
  };
  return async (args) => {
    const child = spawn(process.execPath, [await script(), ...args], {
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
    if (code !== 0) throw new Error(`phase ${args.join(' ')} exited with ${code}: ${err}`);
    return JSON.parse(out.trim().split('\n').at(-1)!);
  };
}
