/** What `diagnose()` finds of a MySQL / MariaDB store: its schema, the server's durability, and the privileges a store needs. */
import {
  type Diagnosis,
  durabilityDiagnosis,
  SURVIVES_SERVER_CRASH,
  schemaDiagnosis,
} from '@ckpt/core/adapter';
import type { Pool } from 'mysql2/promise';
import { SCHEMA_VERSION, tables } from './schema.js';

/** The checks of namespace `namespace` on `pool`'s server. */
export async function diagnose(pool: Pool, namespace: string): Promise<Diagnosis[]> {
  const t = tables(namespace);
  const query = async (sql: string) =>
    ((await pool.query(sql)) as unknown as [Record<string, unknown>[]])[0];
  const [meta] = await query(`SELECT value FROM ${t.meta} WHERE k = 'schema_version'`);
  const [server] = await query(
    'SELECT VERSION() AS version, @@innodb_flush_log_at_trx_commit AS flush, DATABASE() AS db',
  );
  const flush = Number(server!.flush);
  const grants = (await query('SHOW GRANTS')).map((row) => String(Object.values(row)[0]));
  const db = String(server!.db);
  const needed = ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'TRIGGER', 'EXECUTE'];
  const lacking = needed.filter(
    (privilege) =>
      !grants.some(
        (grant) =>
          (grant.includes(' ON *.* ') || grant.includes(` ON \`${db}\`.* `)) &&
          (grant.includes('ALL PRIVILEGES') ||
            new RegExp(`\\b${privilege}\\b`).test(grant.split(' ON ')[0]!)),
      ),
  );
  return [
    schemaDiagnosis({
      server: String(server!.version),
      where: `namespace '${namespace}'`,
      version: meta?.value,
      pkg: '@ckpt/mysql',
      latest: SCHEMA_VERSION,
    }),
    durabilityDiagnosis({
      settings: `innodb_flush_log_at_trx_commit = ${flush}`,
      ok: flush === 1,
      consequence:
        flush === 1
          ? SURVIVES_SERVER_CRASH
          : 'up to about a second of calls that resolved may be lost when the server crashes',
      fix: 'SET GLOBAL innodb_flush_log_at_trx_commit = 1 (and in the server configuration)',
    }),
    {
      check: 'privileges',
      status: lacking.length === 0 ? 'ok' : 'warn',
      detail:
        lacking.length === 0
          ? `this user has ${needed.join(', ')} on the database ${db}`
          : `no grant on the database ${db} (or all databases) gives this user ${lacking.join(', ')}; grants on single tables or routines were not read`,
      fix: `GRANT ${needed.join(', ')} ON \`${db}\`.* TO <user> (the @ckpt/mysql README lists what a migration needs besides)`,
    },
  ];
}
