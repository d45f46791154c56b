/**
 * A PostgreSQL server of a test's own, for what must never happen to the shared one: a
 * restart, a shutdown. A new cluster (initdb) in a temporary directory, on a free loopback
 * port, with trust authentication and fsync off, from the server binaries installed here
 * (CKPT_TEST_POSTGRES_BINDIR, else `pg_config --bindir`, else the newest
 * /usr/lib/postgresql/<version>/bin). initdb refuses to run as root, so as root every server
 * command runs as the `postgres` user.
 */
import { execFile, execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { createServer } from 'node:net';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { serviceAvailable } from './services.js';

const run = promisify(execFile);

/** A PostgreSQL server only the test that started it uses. */
export interface ScratchPostgres {
  /** Its URL: user and database `postgres`. */
  readonly url: string;
  /** Restart it with a fast shutdown: every session gets 57P01, then it takes connections again. */
  restart(): Promise<void>;
  /** Stop it at once and remove its files. */
  remove(): Promise<void>;
}

/** Where the server binaries are, or undefined when this machine has none. */
function binDir(): string | undefined {
  const given = process.env.CKPT_TEST_POSTGRES_BINDIR;
  if (given) return given;
  try {
    const dir = execFileSync('pg_config', ['--bindir'], { encoding: 'utf8' }).trim();
    if (existsSync(join(dir, 'initdb'))) return dir;
  } catch {
    // no pg_config: look where Debian and Ubuntu install each version
  }
  const root = '/usr/lib/postgresql';
  if (!existsSync(root)) return undefined;
  const versions = readdirSync(root)
    .filter((v) => existsSync(join(root, v, 'bin', 'initdb')))
    .sort((a, b) => Number(b) - Number(a));
  return versions[0] === undefined ? undefined : join(root, versions[0], 'bin');
}

/**
 * Whether a scratch server can be started here (see `serviceAvailable`: without the binaries,
 * its tests are skipped loudly, or fail under CKPT_REQUIRE_SERVICES=1).
 */
export function scratchPostgresAvailable(): Promise<boolean> {
  return serviceAvailable('PostgreSQL server binaries (initdb, pg_ctl)', async () => {
    if (binDir() === undefined) {
      throw new Error('no pg_config --bindir nor /usr/lib/postgresql/*/bin/initdb found');
    }
    if (process.getuid?.() === 0) await run('id', ['-u', 'postgres']); // whom they run as
  });
}

/** `command` with `args`, as the `postgres` user when this process is root. */
function asServerUser(command: string, args: string[]): [string, string[]] {
  return process.getuid?.() === 0
    ? ['runuser', ['-u', 'postgres', '--', command, ...args]]
    : [command, args];
}

/** A loopback port nothing listens on now. */
async function freePort(): Promise<number> {
  const server = createServer();
  await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
  const { port } = server.address() as { port: number };
  await new Promise((resolve) => server.close(resolve));
  return port;
}

/** Start a new server; `remove()` it in a `finally`. */
export async function startScratchPostgres(): Promise<ScratchPostgres> {
  const bin = binDir();
  if (bin === undefined)
    throw new Error('no PostgreSQL server binaries (see scratchPostgresAvailable)');
  const server = (command: string, args: string[]) =>
    run(...asServerUser(join(bin, command), args));
  // Made by the server's user, who must own it.
  const dir = (
    await run(...asServerUser('mktemp', ['-d', '/tmp/ckpt-scratch-pg-XXXXXX']))
  ).stdout.trim();
  const data = join(dir, 'data');
  const port = await freePort();
  const ctl = (...args: string[]) => server('pg_ctl', ['-D', data, '-w', '-t', '60', ...args]);
  // Its output goes to a file: a pipe of ours it held would keep pg_ctl's call from ending.
  const log = join(dir, 'log');
  // A test that dies before its `finally` still leaves no server running.
  const stopAtExit = () => {
    try {
      execFileSync(...asServerUser(join(bin, 'pg_ctl'), ['-D', data, '-m', 'immediate', 'stop']), {
        stdio: 'ignore',
      });
    } catch {
      // not running
    }
  };
  const remove = async () => {
    process.off('exit', stopAtExit);
    stopAtExit();
    await run('rm', ['-rf', dir]);
  };
  try {
    await server('initdb', [
      '-D',
      data,
      '-U',
      'postgres',
      '-A',
      'trust',
      '-E',
      'UTF8',
      '--no-sync',
    ]);
    const options = `-p ${port} -k ${dir} -c listen_addresses=127.0.0.1 -c fsync=off`;
    process.once('exit', stopAtExit);
    await ctl('-l', log, '-o', options, 'start');
  } catch (err) {
    await remove();
    throw err;
  }
  return {
    url: `postgres://postgres@127.0.0.1:${port}/postgres`,
    restart: async () => {
      await ctl('-l', log, '-m', 'fast', 'restart');
    },
    remove,
  };
}
