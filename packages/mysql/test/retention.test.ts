/** Retention at the backend on MySQL / MariaDB, and the upgrade of a namespace from the one before pins. */
import { backendRetentionCases } from '@ckpt/contract-tests';
import { type MysqlBackend, mysql } from '@ckpt/mysql';
import { describe } from 'vitest';
import { migrations, tables } from '../src/schema.js';
import { adminPool, available, freshNamespace, url } from './support.js';

describe.skipIf(!available)('mysql', () => {
  backendRetentionCases({
    name: 'mysql',
    open: () => mysql({ url, namespace: freshNamespace() }),
    connect: (backend) => mysql({ url, namespace: (backend as MysqlBackend).namespace }),
    async openUpgraded() {
      const namespace = freshNamespace();
      const t = tables(namespace);
      // The schema before pins: version 6, the first six steps.
      const steps = migrations(namespace).slice(0, 6);
      const admin = adminPool();
      await admin.query(
        `CREATE TABLE ${t.meta} (k VARCHAR(64) NOT NULL PRIMARY KEY, value VARCHAR(64) NOT NULL) ENGINE=InnoDB`,
      );
      for (const step of steps) for (const statement of step) await admin.query(statement);
      await admin.query(`INSERT INTO ${t.meta} VALUES ('schema_version', '${steps.length}')`);
      await admin.query(
        `INSERT INTO ${t.checkpoints} VALUES ('old', 1, NULL, 1000, '{}'), ('old', 2, 1, 2000, '{}')`,
      );
      await admin.query(`INSERT INTO ${t.bodies} VALUES ('old', 1, '"one"'), ('old', 2, '"two"')`);
      await admin.query(
        `INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, metadata, created_at, updated_at,
                                    head_parent, head_created_at)
         VALUES ('old', 2, 2, 2, '{}', 1000, 2000, 1, 2000)`,
      );
      return mysql({ url, namespace });
    },
  });
});
