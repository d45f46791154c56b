/**
 * Loading the adapter package a URL names, which @ckpt/core does not depend on: the
 * application installs the one it deploys with.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CkptError } from './errors.js';

/**
 * Import `pkg` as Node finds it from @ckpt/core, or else from the application's directories:
 * `appDirs`, by default the working directory and the directory of the program Node runs (its
 * main script, such as the `ckpt` command's). A package manager that gives each package only
 * its own dependencies, as pnpm does, keeps an adapter the application installed out of core's
 * reach; and a program run from elsewhere (a global command, a service started from `/`) finds
 * the adapters installed beside it. A package found in none of them is an error that says what
 * to install.
 */
export async function loadPackage(
  pkg: string,
  driver: string | null,
  appDirs: readonly string[] = applicationDirs(),
): Promise<Record<string, unknown>> {
  try {
    return (await import(pkg)) as Record<string, unknown>;
  } catch (err) {
    if (!isMissingPackage(err, pkg)) throw err;
    for (const dir of appDirs) {
      const entry = entryFrom(dir, pkg);
      if (entry !== null) return (await import(entry)) as Record<string, unknown>;
    }
    throw missingAdapter(pkg, driver, err);
  }
}

/** The working directory, and the directory of the main script (its real path, past links). */
function applicationDirs(): string[] {
  const dirs = [process.cwd()];
  const main = process.argv[1];
  if (main) {
    try {
      dirs.push(dirname(realpathSync(main)));
    } catch {
      // No such file (node -e, a REPL): the working directory alone.
    }
  }
  return dirs;
}

/** The URL of `pkg`'s ES module entry as resolved from `dir`, or null when it is not there. */
function entryFrom(dir: string, pkg: string): string | null {
  let manifestPath: string;
  try {
    manifestPath = createRequire(join(dir, 'package.json')).resolve(`${pkg}/package.json`);
  } catch {
    return null;
  }
  const manifest = JSON.parse(readFileSync(manifestPath, 'utf8')) as {
    exports?: { '.'?: { import?: { default?: string } } };
    module?: string;
    main?: string;
  };
  const entry = manifest.exports?.['.']?.import?.default ?? manifest.module ?? manifest.main;
  return entry === undefined ? null : pathToFileURL(join(dirname(manifestPath), entry)).href;
}

/** Whether `err` is Node's report that `pkg` itself (not something it imports) is not installed. */
export function isMissingPackage(err: unknown, pkg: string): boolean {
  const code = (err as { code?: string } | null)?.code;
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    String((err as Error).message).includes(pkg)
  );
}

/** The error that tells the user which packages to install for a URL scheme. */
export function missingAdapter(pkg: string, driver: string | null, cause?: unknown): CkptError {
  const install = [pkg, driver].filter(Boolean).join(' ');
  return new CkptError(
    'UNSUPPORTED',
    `openStore needs the ${pkg} package for this URL; install it: npm install ${install}`,
    { cause, details: { package: pkg } },
  );
}
