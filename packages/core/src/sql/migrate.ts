/**
 * Migrations of a SQL backend's namespace, run once as a store opens: under the adapter's lock,
 * find what the namespace holds, decide where to start by the schema-version rule (migrate from
 * what the database records; refuse with SCHEMA what this package cannot use), run the steps
 * from there, recreate the adapter's routines, record the version.
 *
 * SQLite migrates synchronously as it opens (better-sqlite3 is synchronous, and `sqlite()`
 * refuses a bad file at once), the servers over a connection; so each part of a migration may
 * return a value or a promise, and the runner stays synchronous where all of them are.
 */

import { type StoreLocation, storeNotFound, storeTooOld } from '../adapter/open-existing.js';
import { CkptError } from '../values/errors.js';

/** A value, or a promise of one. */
export type MaybePromise<T> = T | Promise<T>;

/** `next(value)`, at once if `value` is not a promise, else when it settles. */
function then<T, U>(value: MaybePromise<T>, next: (value: T) => MaybePromise<U>): MaybePromise<U> {
  return value instanceof Promise ? value.then(next) : next(value);
}

/** One namespace's migration: what the adapter does at each part of it. */
export interface Migration<Step> {
  /** The namespace in messages, such as `schema 'ckpt'`. */
  where: string;
  /** The package to upgrade, named when the database is newer than it. */
  pkg: string;
  /**
   * Set to open only a namespace that is there already (`create: false`): where it was looked
   * for, for the messages. Nothing is then written: a namespace without the package's tables
   * is refused with NOT_FOUND, one at an older version with SCHEMA.
   */
  existing?: Omit<StoreLocation, 'where'>;
  /** The meta table, by the name `tables()` gives it. */
  meta: string;
  /** Entry i brings the schema from version i to i + 1: change tables, never routines. */
  steps: readonly Step[];
  /** Run `migrate` holding a lock that keeps any other process from migrating at once. */
  locked(migrate: () => MaybePromise<void>): MaybePromise<void>;
  /** Which of the tables this package names exist in the namespace. */
  tables(): MaybePromise<string[]>;
  /** The recorded version: undefined when there is none, null when the record is unusable. */
  version(): MaybePromise<string | null | undefined>;
  /** Create the meta table (and what holds it) for a new namespace. */
  createMeta(): MaybePromise<void>;
  run(step: Step): MaybePromise<void>;
  /**
   * (Re)create the functions or procedures the backend calls, as this package defines them,
   * after the steps of any upgrade: steps change tables only, so each routine is written once.
   */
  routines?(): MaybePromise<void>;
  record(version: number): MaybePromise<void>;
}

/**
 * Bring the namespace to the latest version. A namespace already there is only read, so that
 * a user who may only read opens a store on it too. With `existing`, only check that it is
 * there at the latest version.
 */
export function migrate<Step>(migration: Migration<Step>): MaybePromise<void> {
  const latest = migration.steps.length;
  return migration.locked(() =>
    then(migration.tables(), (tables) =>
      then(tables.includes(migration.meta) ? migration.version() : undefined, (recorded) => {
        const from = migrationStart(
          {
            hasMeta: tables.includes(migration.meta),
            recorded,
            ownTables: tables.filter((name) => name !== migration.meta),
          },
          latest,
          migration.where,
          migration.pkg,
          migration.existing,
        );
        if (from === latest) return;
        const parts: (() => MaybePromise<void>)[] = [
          ...(from === 0 ? [() => migration.createMeta()] : []),
          ...migration.steps.slice(from).map((step) => () => migration.run(step)),
          ...(migration.routines ? [() => migration.routines!()] : []),
          () => migration.record(latest),
        ];
        return parts.reduce<MaybePromise<void>>((done, part) => then(done, part), undefined);
      }),
    ),
  );
}

/** What a backend found for one namespace before migrating it. */
export interface FoundSchema {
  /** Whether the namespace's meta table exists. */
  hasMeta: boolean;
  /** The recorded version: undefined when there is none yet, null when the meta table has no usable record. */
  recorded: string | null | undefined;
  /** Tables with the names this package uses that exist already (the meta table aside). */
  ownTables: string[];
}

/**
 * The version to migrate from (0: a new namespace). `where` names the namespace in messages
 * (for example `schema 'ckpt'`), `pkg` the package to upgrade. With `existing` (`create:
 * false`), a namespace that is not there at the latest version is refused instead.
 */
export function migrationStart(
  found: FoundSchema,
  latest: number,
  where: string,
  pkg: string,
  existing?: Omit<StoreLocation, 'where'>,
): number {
  if (!found.hasMeta && found.ownTables.length > 0) {
    throw schemaError(
      `${where} holds tables that ckpt did not create (${found.ownTables.join(', ')}); use another namespace`,
    );
  }
  if (!found.hasMeta || found.recorded === undefined) {
    if (existing) throw storeNotFound({ where, ...existing }, 'it holds no ckpt tables');
    return 0;
  }
  const version = Number(found.recorded);
  if (found.recorded === null || !Number.isInteger(version) || version < 1) {
    throw schemaError(`${where} records an unknown ckpt schema version; use another namespace`);
  }
  if (version > latest) {
    throw schemaError(
      `${where} has ckpt schema version ${version}, newer than the ${latest} this ${pkg} knows; upgrade ${pkg}`,
    );
  }
  if (existing && version < latest) {
    throw storeTooOld({ where, ...existing }, version, latest, pkg);
  }
  return version;
}

function schemaError(message: string): CkptError {
  return new CkptError('SCHEMA', `${message}.`);
}
