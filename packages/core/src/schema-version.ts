/**
 * The schema-version rule every database backend applies when it opens: migrate from what
 * the database records, and refuse (SCHEMA) what this version of the package cannot use.
 */
import { CkptError } from './errors.js';

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
 * (for example `schema 'ckpt'`), `pkg` the package to upgrade.
 */
export function migrationStart(
  found: FoundSchema,
  latest: number,
  where: string,
  pkg: string,
): number {
  if (!found.hasMeta) {
    if (found.ownTables.length > 0) {
      throw schemaError(
        `${where} holds tables that ckpt did not create (${found.ownTables.join(', ')}); use another namespace`,
      );
    }
    return 0;
  }
  if (found.recorded === undefined) return 0;
  const version = Number(found.recorded);
  if (found.recorded === null || !Number.isInteger(version) || version < 1) {
    throw schemaError(`${where} records an unknown ckpt schema version; use another namespace`);
  }
  if (version > latest) {
    throw schemaError(
      `${where} has ckpt schema version ${version}, newer than the ${latest} this ${pkg} knows; upgrade ${pkg}`,
    );
  }
  return version;
}

function schemaError(message: string): CkptError {
  return new CkptError('SCHEMA', `${message}.`);
}
