/**
 * Loading the adapter package a URL names, which @ckpt/core does not depend on: the
 * application installs the one it deploys with.
 */
import { readFileSync } from 'node:fs';
import { createRequire } from 'node:module';
import { dirname, join } from 'node:path';
import { pathToFileURL } from 'node:url';
import { CkptError } from './errors.js';

/**
 * Import `pkg` as Node finds it from @ckpt/core, or else from the application's directory
 * (`appDir`, the working directory): a package manager that gives each package only its own
 * dependencies, as pnpm does, keeps an adapter the application installed out of core's reach.
 * A package found in neither place is an error that says what to install.
 */
export async function loadPackage(
  pkg: string,
  driver: string | null,
  appDir: string = process.cwd(),
): Promise<Record<string, unknown>> {
  try {
    return (await import(pkg)) as Record<string, unknown>;
  } catch (err) {
    if (!isMissingPackage(err, pkg)) throw err;
    const entry = entryFrom(appDir, pkg);
    if (entry === null) throw missingAdapter(pkg, driver, err);
    return (await import(entry)) as Record<string, unknown>;
  }
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
