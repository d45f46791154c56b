/**
 * The checks `diagnose()` reports that every adapter words alike: the schema it found, and what
 * a call that resolved survives.
 */
import type { Diagnosis } from './backend.js';

/** What a durable store promises: the consequence of a durability setting that keeps every call. */
export const SURVIVES_SERVER_CRASH = 'a call that resolved survives a crash of the server';

/** The schema found: `<server>, <where> at version <found> (this <pkg> writes <latest>)`. */
export function schemaDiagnosis(found: {
  /** The server and its version, such as `PostgreSQL 15.4`; none for an embedded database. */
  server?: string;
  /** The namespace, such as `schema 'ckpt'`. */
  where: string;
  version: unknown;
  pkg: string;
  latest: number;
}): Diagnosis {
  const { server, where, version, pkg, latest } = found;
  return {
    check: 'schema',
    status: 'ok',
    detail: `${server ? `${server}, ` : ''}${where} at version ${version} (this ${pkg} writes ${latest})`,
  };
}

/** The durability settings found (`settings`), and what a call that resolved survives under them. */
export function durabilityDiagnosis(found: {
  settings: string;
  ok: boolean;
  consequence: string;
  fix: string;
}): Diagnosis {
  return {
    check: 'durability',
    status: found.ok ? 'ok' : 'warn',
    detail: `${found.settings}: ${found.consequence}`,
    fix: found.fix,
  };
}
