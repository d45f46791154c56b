/**
 * Loading the adapter package a URL names, which @ckpt/core does not depend on: the
 * application installs the one it deploys with.
 */
import { readFileSync, realpathSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CkptError, errorCode } from '../values/errors.js';

/**
 * Import `pkg` as Node finds it from @ckpt/core, or else from the application's directories:
 * `appDirs`, by default the working directory and the directory of the program Node runs (its
 * main script, such as the `ckpt` command's). A package manager that gives each package only
 * its own dependencies, as pnpm does, keeps an adapter the application installed out of core's
 * reach; and a program run from elsewhere (a global command, a service started from `/`) finds
 * the adapters installed beside it. A package found in none of them, or found without a
 * package it imports (its driver), is an error that says what to install.
 */
export async function loadPackage(
  pkg: string,
  driver: string | null,
  appDirs: readonly string[] = applicationDirs(),
): Promise<Record<string, unknown>> {
  try {
    return (await import(pkg)) as Record<string, unknown>;
  } catch (err) {
    if (!isMissingPackage(err, pkg)) throw missingImport(pkg, err);
    for (const dir of appDirs) {
      const entry = entryFrom(dir, pkg);
      if (entry === null) continue;
      try {
        return (await import(entry)) as Record<string, unknown>;
      } catch (found) {
        throw missingImport(pkg, found);
      }
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

/**
 * The package Node reports as not installed in `err` (`pg` for `pg/lib/client`, `@scope/name`
 * for a file of it), or undefined when `err` is no such report or names a file, not a package.
 * ES modules say "Cannot find package 'pg' imported from …", CommonJS "Cannot find module 'pg'".
 */
export function missingPackageOf(err: unknown): string | undefined {
  const code = errorCode(err);
  if (code !== 'ERR_MODULE_NOT_FOUND' && code !== 'MODULE_NOT_FOUND') return undefined;
  const name = /Cannot find (?:package|module) '([^']+)'/.exec(String((err as Error).message))?.[1];
  if (name === undefined || /^[./]|^[a-z]+:/i.test(name)) return undefined;
  const parts = name.split('/');
  return (name.startsWith('@') ? parts.slice(0, 2) : parts.slice(0, 1)).join('/');
}

/** Whether `err` is Node's report that `pkg` itself (not something it imports) is not installed. */
export function isMissingPackage(err: unknown, pkg: string): boolean {
  return missingPackageOf(err) === pkg;
}

/**
 * `err`, from loading `pkg`, as the error that names the package to install when it is Node's
 * report of a package `pkg` imports (its driver) that is not installed; else `err` as it is.
 */
function missingImport(pkg: string, err: unknown): unknown {
  const missing = missingPackageOf(err);
  if (missing === undefined || missing === pkg) return err;
  return new CkptError(
    'UNSUPPORTED',
    `openStore found ${pkg}, but not the ${missing} package it uses to reach the server; install it: npm install ${missing}`,
    { cause: err, details: { package: missing } },
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
