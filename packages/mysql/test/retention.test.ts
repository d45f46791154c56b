/** Retention at the backend on MySQL / MariaDB, and the upgrade of a namespace from the one before pins. */
import { backendRetentionCases } from '@ckpt/contract-tests/servers';
import { type MysqlBackend, mysql } from '@ckpt/mysql';
import { describe } from 'vitest';
import { tables } from '../src/schema.js';
import { writeOldTables } from './old-schemas.js';
import { adminPool, available, freshNamespace, url } from './support.js';

describe.skipIf(!available)('mysql', () => {
  backendRetentionCases({
    name: 'mysql',
    open: () => mysql({ url, namespace: freshNamespace() }),
    connect: (backend) => mysql({ url, namespace: (backend as MysqlBackend).namespace }),
    async openUpgraded() {
      const namespace = freshNamespace();
      const t = tables(namespace);
      const admin = adminPool();
      // The schema before pins.
      await writeOldTables(admin, namespace, 6);
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
