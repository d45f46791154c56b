/** Retention at the backend on SQLite, and the upgrade of a file from the schema before pins. */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { backendRetentionCases } from '@ckpt/contract-tests/servers';
import { sqlite } from '@ckpt/sqlite';
import Database from 'better-sqlite3';
import { afterAll } from 'vitest';
import type { SqliteBackend } from '../src/backend.js';
import { checkpointMigrations, tables } from '../src/schema.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-retention-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
let files = 0;

backendRetentionCases({
  name: 'sqlite',
  open: () => sqlite({ path: join(dir, `${files++}.db`) }),
  connect: (backend) => sqlite({ path: (backend as SqliteBackend).db.name }),
  async openUpgraded() {
    const path = join(dir, `${files++}.db`);
    const db = new Database(path);
    const t = tables('ckpt');
    // Version 2: pins came with version 3.
    const beforePins = checkpointMigrations('ckpt').slice(0, 2);
    db.exec(
      `CREATE TABLE ${t.meta} (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID`,
    );
    for (const step of beforePins) db.exec(step);
    db.exec(`
      INSERT INTO ${t.meta} VALUES ('checkpoints_schema_version', '${beforePins.length}');
      INSERT INTO ${t.bodies} (id, data) VALUES (1, '"one"'), (2, '"two"');
      INSERT INTO ${t.checkpoints} VALUES ('old', 1, NULL, 1000, '{}', 1, NULL), ('old', 2, 1, 2000, '{}', 2, NULL);
      INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_parent, head_created_at,
                                 head_body, metadata, created_at, updated_at)
      VALUES ('old', 2, 2, 2, 1, 2000, 2, '{}', 1000, 2000);`);
    db.close();
    return sqlite({ path });
  },
});
