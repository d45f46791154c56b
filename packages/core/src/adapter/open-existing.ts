/**
 * The `create` option every adapter takes. `create: false` opens a store that must exist
 * already and changes nothing to open it: no file, schema, table or key is made and no
 * migration runs. A tool that only looks at a store, or a typo in its path or namespace, so
 * never makes a new, empty store that then answers "0 sessions".
 */
import { CkptError, invalidArgument } from '../values/errors.js';
import { describe } from '../values/validate.js';

/** `create` as `factory()` was given it: true (the default) or false; anything else is refused. */
export function checkCreate(value: unknown, factory: string): boolean {
  if (value === undefined) return true;
  if (typeof value !== 'boolean') {
    throw invalidArgument(
      'create',
      `${factory}() needs create to be true or false; got ${describe(value)}.`,
    );
  }
  return value;
}

/** Where a store was looked for, for the messages of `create: false`. */
export interface StoreLocation {
  /** The namespace as the backend names it: `namespace 'ckpt'`, `schema 'ckpt'`. */
  where: string;
  /** The file or the server, passwords hidden: `'./agent.db'`, `postgres://app:***@db/agents`. */
  at: string;
  /** What the user should check: `the path and the namespace`, `the URL and the namespace`. */
  check: string;
}

/**
 * NOT_FOUND for a store that `create: false` did not find; `why` says what is missing. Its
 * details carry the location and `why`, for a tool that words its own advice.
 */
export function storeNotFound(location: StoreLocation, why: string): CkptError {
  return new CkptError(
    'NOT_FOUND',
    `there is no ckpt store in ${location.where} at ${location.at} (${why}); check ${location.check}, or open it without { create: false } to create a new store there.`,
    { details: { argument: 'namespace', ...location, why } },
  );
}

/** SCHEMA for a store older than this package, which `create: false` does not upgrade. */
export function storeTooOld(
  location: StoreLocation,
  version: number,
  latest: number,
  pkg: string,
): CkptError {
  return new CkptError(
    'SCHEMA',
    `${location.where} at ${location.at} has ckpt schema version ${version}, older than the ${latest} this ${pkg} uses, and { create: false } changes nothing; open it once without { create: false } (or start the application on it) to upgrade it.`,
  );
}
