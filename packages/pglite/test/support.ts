/**
 * One PGlite for a test file: starting one takes seconds, a schema in it a fraction of one, and
 * emptying a schema a case is done with almost nothing. Each case gets a namespace of its own.
 */
import { namespacePool } from '@ckpt/contract-tests/servers';
import { PGlite } from '@electric-sql/pglite';
import { afterAll } from 'vitest';

export const db = new PGlite();

let made = 0;
export const namespaces = namespacePool({
  fresh: () => `t${process.pid}_${made++}`,
  // Every table but `meta`, which records the schema version.
  empty: async (namespace) => {
    await db.exec(`
      DO $$ DECLARE t text; BEGIN
        FOR t IN SELECT tablename FROM pg_tables WHERE schemaname = '${namespace}' AND tablename <> 'meta' LOOP
          EXECUTE format('DELETE FROM %I.%I', '${namespace}', t);
        END LOOP;
      END $$`);
  },
  drop: async (namespace) => {
    await db.exec(`DROP SCHEMA IF EXISTS ${namespace} CASCADE`);
  },
});

afterAll(async () => {
  await namespaces.dropAll();
  await db.close();
});
