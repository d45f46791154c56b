/**
 * Removing a store's schema for `destroy()`, in one transaction under the migration lock. A
 * schema ckpt created itself (its meta table says so) is dropped whole. A schema someone else
 * made for it (an administrator who gave the application a schema of its own) stays, with its
 * grants and anything else in it: only ckpt's tables and functions are dropped from it.
 */
import { SQL_TABLES } from '@ckpt/core/sql';
import type pg from 'pg';
import { OWN_SCHEMA_KEY, underMigrationLock } from './migrate.js';
import { schemaIdentifier } from './schema.js';
import { functions } from './stored-code.js';

/** The names of the functions ckpt defines in schema `ns`, those earlier versions had included. */
function functionNames(ns: string): string[] {
  const qualified = new RegExp(`FUNCTION(?: IF EXISTS)? ${schemaIdentifier(ns)}\\.(\\w+)\\(`, 'g');
  return [...new Set([...functions(ns).matchAll(qualified)].map((m) => m[1]!))];
}

/** Remove everything of the store in schema `ns`, leaving every other schema alone. */
export async function destroySchema(pool: pg.Pool, ns: string): Promise<void> {
  const schema = schemaIdentifier(ns);
  await underMigrationLock(pool, ns, async (client) => {
    const meta = await client.query<{ found: boolean }>(
      'SELECT to_regclass($1) IS NOT NULL AS found',
      [`${schema}.meta`],
    );
    // No meta table: another destroy got here first, and there is no marker left to read.
    const own =
      meta.rows[0]!.found &&
      (await client.query(`SELECT FROM ${schema}.meta WHERE key = $1`, [OWN_SCHEMA_KEY]))
        .rowCount! > 0;
    if (own) {
      await client.query(`DROP SCHEMA ${schema} CASCADE`);
      return;
    }
    const routines = await client.query<{ routine: string }>(
      `SELECT format('%I.%I(%s)', n.nspname, p.proname, pg_get_function_identity_arguments(p.oid)) AS routine
         FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = $1 AND p.proname = ANY($2)`,
      [ns, functionNames(ns)],
    );
    for (const { routine } of routines.rows) await client.query(`DROP FUNCTION ${routine}`);
    await client.query(
      `DROP TABLE IF EXISTS ${SQL_TABLES.map((table) => `${schema}.${table}`).join(', ')}`,
    );
    // The trigger functions of the change log (schema step 8) and of the tag index (step 9),
    // once no table's triggers call them.
    await client.query(`DROP FUNCTION IF EXISTS ${schema}.record_change(), ${schema}.index_tags()`);
  });
}
