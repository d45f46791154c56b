/** Shared by the PostgreSQL tests: the server's URL, fresh namespaces, and cleanup. */
import { namespacePool } from '@ckpt/contract-tests/servers';
import { type PostgresBackend, postgres } from '@ckpt/postgres';
import { serviceAvailable, serviceUrl } from '@ckpt/test-servers';
import pg from 'pg';
import { afterAll } from 'vitest';

export const url = serviceUrl('postgres');

/** Whether the server answers (see `serviceAvailable`). */
export const available = await serviceAvailable(`PostgreSQL at ${url}`, async () => {
  const client = new pg.Client({ connectionString: url, connectionTimeoutMillis: 3000 });
  await client.connect();
  await client.end();
});

/** PgBouncer in transaction pooling mode in front of the same server (scripts/start-pgbouncer.sh). */
export const bouncerUrl =
  process.env.CKPT_TEST_PGBOUNCER_URL || 'postgres://postgres@127.0.0.1:6432/test';

/** Whether PgBouncer answers. */
export const bouncerAvailable = await serviceAvailable(`PgBouncer at ${bouncerUrl}`, async () => {
  const client = new pg.Client({ connectionString: bouncerUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  await client.end();
});

let made = 0;
/** A namespace no other test or run uses. */
export function freshNamespace(): string {
  return `t${process.pid}_${made++}_${Math.random().toString(36).slice(2, 8)}`;
}

/**
 * A backend on `at` (default: the server) in `namespace` (default: a fresh one), migrated.
 * Through PgBouncer, which cannot hold a LISTEN in transaction mode, its watchers poll.
 */
export async function freshBackend(
  at = url,
  namespace = freshNamespace(),
): Promise<PostgresBackend> {
  const backend = postgres({ url: at, namespace, listen: at === url });
  await backend.ready();
  return backend;
}

// Cleanup runs on a connection of its own: a test may have closed the backend's pool.
let admin: pg.Pool | undefined;
/** A pool of its own for looking at and cleaning up the server, ended after the file's tests. */
export const adminPool = () => {
  admin ??= new pg.Pool({ connectionString: url, max: 1 });
  return admin;
};
const toDrop: string[] = [];
afterAll(async () => {
  await contractNamespaces.dropAll();
  for (const namespace of toDrop.splice(0)) await dropSchema(namespace);
  await admin?.end();
  admin = undefined;
});

/** A fresh namespace whose schema is dropped after the file's tests, whatever they left. */
export function namespaceToDrop(): string {
  const namespace = freshNamespace();
  toDrop.push(namespace);
  return namespace;
}

/** Drop `namespace` (a schema) with everything in it. */
export const dropSchema = async (namespace: string) => {
  await adminPool().query(`DROP SCHEMA IF EXISTS ${namespace} CASCADE`);
};

/** The schema `namespace` if it exists, and every table, index and function in it, sorted. */
export async function schemaContents(namespace: string): Promise<string[]> {
  const { rows } = await adminPool().query(
    `SELECT nspname AS name FROM pg_namespace WHERE nspname = $1
     UNION ALL
     SELECT c.relname FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace WHERE n.nspname = $1
     UNION ALL
     SELECT p.proname FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace WHERE n.nspname = $1`,
    [namespace],
  );
  return rows.map((row) => row.name as string).sort();
}

/** Drop the backend's schema and close it. */
export async function dropAndClose(backend: PostgresBackend): Promise<void> {
  await backend.close();
  await dropSchema(backend.namespace);
}

/** The contract suite's namespaces, emptied and used again from case to case (see `namespacePool`). */
export const contractNamespaces = namespacePool({
  fresh: freshNamespace,
  // Every table but `meta`, which records the schema version, in one round trip; the change
  // log last, with what the deletes before it recorded.
  empty: async (namespace) => {
    await adminPool().query(`
      DO $$ DECLARE t text; BEGIN
        FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = '${namespace}'
                  ORDER BY tablename = 'changes' LOOP
          IF t = 'meta' THEN
            EXECUTE format('DELETE FROM %I.meta WHERE key = %L', '${namespace}', 'changes_trimmed_through');
          ELSE
            EXECUTE format('DELETE FROM %I.%I', '${namespace}', t);
          END IF;
        END LOOP;
      END $$`);
  },
  drop: dropSchema,
});
