/**
 * Removing a namespace's store for `destroy()`, under the migration lock: its procedures (those
 * this version defines, and those earlier versions had) and its tables, the KV store's and the
 * meta table included. Tables and procedures of other namespaces in the database stay. MySQL
 * commits each DROP on its own; the meta table goes last, so that a destroy cut short leaves a
 * namespace that still opens (with `create: false` too), and running destroy again finishes it.
 */
import type { Pool } from 'mysql2/promise';
import { underMigrationLock } from './migrate.js';
import { tables } from './schema.js';
import { procedures } from './stored-code.js';

/** Drop every procedure and table of namespace `ns`. */
export async function destroyNamespace(pool: Pool, ns: string): Promise<void> {
  const conn = await pool.getConnection();
  try {
    await underMigrationLock(conn, ns, async () => {
      // procedures() drops each procedure before it creates it: its drops name them all.
      for (const statement of procedures(ns)) {
        if (statement.startsWith('DROP PROCEDURE')) await conn.query(statement);
      }
      const { meta, ...data } = tables(ns);
      await conn.query(`DROP TABLE IF EXISTS ${Object.values(data).join(', ')}`);
      await conn.query(`DROP TABLE IF EXISTS ${meta}`);
    });
  } finally {
    conn.release();
  }
}
