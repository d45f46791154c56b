/** What `diagnose()` finds of a PostgreSQL store: its schema, the server's durability, and the privileges a store needs. */
import {
  type Diagnosis,
  durabilityDiagnosis,
  SURVIVES_SERVER_CRASH,
  schemaDiagnosis,
} from '@ckpt/core/adapter';
import type pg from 'pg';
import { SCHEMA_VERSION, schemaIdentifier } from './schema.js';

/** The checks of schema `namespace` on `pool`'s server. */
export async function diagnose(pool: pg.Pool, namespace: string): Promise<Diagnosis[]> {
  const ns = schemaIdentifier(namespace);
  const { rows: meta } = await pool.query(
    `SELECT value FROM ${ns}.meta WHERE key = 'schema_version'`,
  );
  const { rows: settings } = await pool.query(
    "SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync",
  );
  const { version, fsync, sync } = settings[0] as Record<string, string>;
  const durable = fsync === 'on' && sync !== 'off';
  const { rows: lacking } = await pool.query(
    `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
      WHERE n.nspname = $1 AND c.relkind = 'r'
        AND NOT has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE')
     UNION ALL
     SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
      WHERE n.nspname = $1 AND NOT has_function_privilege(p.oid, 'EXECUTE')`,
    [namespace],
  );
  return [
    schemaDiagnosis({
      server: `PostgreSQL ${version}`,
      where: `schema '${namespace}'`,
      version: meta[0]?.value,
      pkg: '@ckpt/postgres',
      latest: SCHEMA_VERSION,
    }),
    durabilityDiagnosis({
      settings: `fsync = ${fsync}, synchronous_commit = ${sync}`,
      ok: durable,
      consequence: durable
        ? SURVIVES_SERVER_CRASH
        : 'the last calls that resolved may be lost when the server crashes',
      fix: 'set fsync = on and synchronous_commit = on in postgresql.conf (or ALTER SYSTEM), then reload',
    }),
    {
      check: 'privileges',
      status: lacking.length === 0 ? 'ok' : 'fail',
      detail:
        lacking.length === 0
          ? 'this user may read and write every table and run every function of the schema'
          : `this user may not write (or run) ${lacking.map((r) => r.name).join(', ')}; it can read at most`,
      fix: `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${ns} TO <user>; GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${ns} TO <user> (or open the store as the schema's owner)`,
    },
  ];
}
