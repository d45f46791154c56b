/**
 * The migration that runs once when a store opens: the SQL family's runner, under a
 * transaction-scoped advisory lock, so that processes starting at once against an empty
 * database migrate it once. `destroy()` takes the same lock.
 */
import type { StoreLocation } from '@ckpt/core/adapter';
import { migrate as runMigration, SQL_TABLES } from '@ckpt/core/sql';
import type pg from 'pg';
import { readCommitted } from './lease.js';
import { migrations, schemaIdentifier } from './schema.js';
import { functions } from './stored-code.js';

/**
 * The meta row that says ckpt created the schema itself, so that destroy() may drop it whole;
 * a schema an administrator made for ckpt keeps everything but ckpt's own tables and functions.
 */
export const OWN_SCHEMA_KEY = 'schema_created_by_ckpt';

/**
 * Run `work` on a connection of `pool` in a transaction at READ COMMITTED, holding the lock
 * that keeps any other process from migrating (or destroying) schema `ns` at once.
 */
export async function underMigrationLock<T>(
  pool: pg.Pool,
  ns: string,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  // READ COMMITTED whatever the pool's default: each statement must see what a migration
  // that held the lock before this one committed, not a snapshot from before the wait.
  return readCommitted(pool, async (client) => {
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`ckpt:migrate:${ns}`]);
    return work(client);
  });
}

/**
 * Bring schema `ns` to SCHEMA_VERSION; or, given `existing` (`create: false`), only check that
 * it is there at that version.
 */
export async function migrate(
  pool: pg.Pool,
  ns: string,
  existing?: Omit<StoreLocation, 'where'>,
): Promise<void> {
  const schema = schemaIdentifier(ns);
  // The connection that holds the lock; every part of the migration runs on it.
  let client: pg.PoolClient;
  await runMigration<string>({
    where: `schema '${ns}'`,
    pkg: '@ckpt/postgres',
    meta: 'meta',
    steps: migrations(ns),
    existing,
    locked: (work) =>
      underMigrationLock(pool, ns, async (locked) => {
        client = locked;
        await work();
      }),
    async tables() {
      const found = await client.query<{ tablename: string }>(
        'SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename = ANY($2)',
        [ns, SQL_TABLES],
      );
      return found.rows.map((row) => row.tablename);
    },
    async version() {
      const recorded = await client.query<{ value: string }>(
        `SELECT value FROM ${schema}.meta WHERE key = 'schema_version'`,
      );
      return recorded.rows[0]?.value ?? null;
    },
    async createMeta() {
      // CREATE SCHEMA checks for CREATE on the database before it looks for the schema, even
      // with IF NOT EXISTS: a schema an administrator made for this user is used as it is.
      const made = await client.query('SELECT FROM pg_namespace WHERE nspname = $1', [ns]);
      if (made.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`CREATE TABLE ${schema}.meta (key text PRIMARY KEY, value text NOT NULL)`);
      if (made.rowCount === 0) {
        await client.query(`INSERT INTO ${schema}.meta (key, value) VALUES ($1, 'true')`, [
          OWN_SCHEMA_KEY,
        ]);
      }
    },
    async run(step) {
      await client.query(step);
    },
    async routines() {
      await client.query(functions(ns));
    },
    async record(version) {
      await client.query(
        `INSERT INTO ${schema}.meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [String(version)],
      );
    },
  });
}
