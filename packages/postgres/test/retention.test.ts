/** Retention at the backend on PostgreSQL, and the upgrade of a schema from the one before pins. */
import { backendRetentionCases } from '@ckpt/contract-tests/servers';
import { type PostgresBackend, postgres } from '@ckpt/postgres';
import { describe } from 'vitest';
import { migrations } from '../src/schema.js';
import { adminPool, available, freshNamespace, url } from './support.js';

describe.skipIf(!available)('postgres', () => {
  backendRetentionCases({
    name: 'postgres',
    open: () => postgres({ url, namespace: freshNamespace() }),
    connect: (backend) => postgres({ url, namespace: (backend as PostgresBackend).namespace }),
    async openUpgraded() {
      const namespace = freshNamespace();
      const ns = `"${namespace}"`;
      // Version 5, the last before pins.
      const steps = migrations(namespace).slice(0, 5);
      const admin = adminPool();
      await admin.query(`CREATE SCHEMA ${ns}`);
      await admin.query(`CREATE TABLE ${ns}.meta (key text PRIMARY KEY, value text NOT NULL)`);
      for (const step of steps) await admin.query(step);
      await admin.query(`
        INSERT INTO ${ns}.meta VALUES ('schema_version', '${steps.length}');
        INSERT INTO ${ns}.checkpoints VALUES ('old', 1, NULL, 1000, '{}'), ('old', 2, 1, 2000, '{}');
        INSERT INTO ${ns}.bodies VALUES ('old', 1, '"one"'), ('old', 2, '"two"');
        INSERT INTO ${ns}.sessions (id, head, last_seq, checkpoints, metadata, created_at, updated_at,
                                    head_parent, head_created_at)
        VALUES ('old', 2, 2, 2, '{}', 1000, 2000, 1, 2000);`);
      return postgres({ url, namespace });
    },
  });
});
