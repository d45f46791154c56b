/**
 * Files as older schema versions left them, and the writes those versions made, frozen here so
 * that the upgrade tests can write sessions through an older schema's own statements. An older
 * version's tables are the migration steps up to it, which never change (schema.ts).
 */
import type { OldSchemaCalls } from '@ckpt/contract-tests/servers';
import type { ImportInput } from '@ckpt/core/adapter';
import { importedSessionRow } from '@ckpt/core/sql';
import Database from 'better-sqlite3';
import { checkpointMigrations, STEP_FUNCTIONS, tables } from '../src/schema.js';

/** A new file at `path` holding namespace `ckpt` at schema `version`, open. */
export function fileAtVersion(path: string, version: number): Database.Database {
  const db = new Database(path);
  db.pragma('journal_mode = WAL');
  for (const [name, fn] of Object.entries(STEP_FUNCTIONS)) {
    db.function(name, { deterministic: true }, fn);
  }
  db.exec(`
    CREATE TABLE ${tables('ckpt').meta} (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;
    ${checkpointMigrations('ckpt').slice(0, version).join('\n')}
    INSERT INTO ${tables('ckpt').meta} (key, value) VALUES ('checkpoints_schema_version', '${version}');
  `);
  return db;
}

interface Row {
  seq: number;
  parent: number | null;
  created_at: number;
  metadata: string;
  body: number;
  transcript: number | null;
}

/** A version 1 file at `path` (namespace `ckpt`), and its calls on session 'old'. */
export function versionOne(path: string): OldSchemaCalls & { close(): void } {
  const t = tables('ckpt');
  const db = fileAtVersion(path, 1);
  const row = (id: string, seq: number) =>
    db.prepare(`SELECT * FROM ${t.checkpoints} WHERE session_id = ? AND seq = ?`).get(id, seq) as
      | Row
      | undefined;
  const insertCheckpoint = (id: string, r: Row) =>
    db
      .prepare(`INSERT INTO ${t.checkpoints} VALUES (?, ?, ?, ?, ?, ?, ?)`)
      .run(id, r.seq, r.parent, r.created_at, r.metadata, r.body, r.transcript);
  const insertBody = (data: string) =>
    Number(db.prepare(`INSERT INTO ${t.bodies} (data) VALUES (?)`).run(data).lastInsertRowid);

  return {
    append: async (at) =>
      db.transaction(() => {
        const session = db
          .prepare(`SELECT head, last_seq FROM ${t.sessions} WHERE id = 'old'`)
          .get() as { head: number; last_seq: number } | undefined;
        const seq = (session?.last_seq ?? 0) + 1;
        const metadata = JSON.stringify({ at });
        const body = insertBody(String(at));
        const parent = session?.head ?? null;
        insertCheckpoint('old', { seq, parent, created_at: at, metadata, body, transcript: null });
        db.prepare(`
          INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_parent, head_created_at,
                                     head_body, metadata, created_at, updated_at)
          VALUES ('old', ?, ?, 1, ?, ?, ?, ?, ?, ?)
          ON CONFLICT (id) DO UPDATE SET head = excluded.head, last_seq = excluded.last_seq,
            checkpoints = checkpoints + 1, head_parent = excluded.head_parent,
            head_created_at = excluded.head_created_at, head_body = excluded.head_body,
            metadata = excluded.metadata, updated_at = excluded.updated_at`).run(
          seq,
          seq,
          parent,
          at,
          body,
          metadata,
          at,
          at,
        );
      })(),
    rollback: async (seq, at) => {
      const r = row('old', seq)!;
      db.prepare(`
        UPDATE ${t.sessions} SET head = ?, head_parent = ?, head_created_at = ?, head_body = ?,
                                 metadata = ?, updated_at = ?
         WHERE id = 'old'`).run(seq, r.parent, r.created_at, r.body, r.metadata, at);
    },
    fork: async (seq, at) =>
      db.transaction(() => {
        const top = row('old', seq)!;
        let count = 0;
        let headBody = 0;
        for (
          let r: Row | undefined = top;
          r;
          r = r.parent === null ? undefined : row('old', r.parent)
        ) {
          const body = Number(
            db
              .prepare(`INSERT INTO ${t.bodies} (data) SELECT data FROM ${t.bodies} WHERE id = ?`)
              .run(r.body).lastInsertRowid,
          );
          insertCheckpoint('fork', { ...r, body });
          if (r.seq === seq) headBody = body;
          count++;
        }
        db.prepare(`
          INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, forked_from_id, forked_from_seq,
                                     head_parent, head_created_at, head_body, metadata, created_at, updated_at)
          VALUES ('fork', ?, ?, ?, 'old', ?, ?, ?, ?, ?, ?, ?)`).run(
          seq,
          seq,
          count,
          seq,
          top.parent,
          top.created_at,
          headBody,
          top.metadata,
          at,
          at,
        );
      })(),
    close: () => db.close(),
  };
}

/** What a version 3 file takes, each value as text. */
export interface VersionThreeWrites {
  /** Write a session whole (no pins or needs), as an import of version 3 did. */
  session(input: ImportInput): void;
  state(scope: string, key: string, value: string): void;
  close(): void;
}

/**
 * A version 3 file at `path` (namespace `ckpt`), and its writes of values as that version
 * stored them: as the text core hands over, whatever codecs made it.
 */
export function versionThree(path: string): VersionThreeWrites {
  const t = tables('ckpt');
  const db = fileAtVersion(path, 3);
  const insert = {
    body: db.prepare(`INSERT INTO ${t.bodies} (data) VALUES (?)`),
    transcript: db.prepare(`INSERT INTO ${t.transcripts} (items) VALUES (?)`),
    checkpoint: db.prepare(`INSERT INTO ${t.checkpoints} VALUES (?, ?, ?, ?, ?, ?, ?)`),
    session: db.prepare(`
      INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, forked_from_id, forked_from_seq,
                                 head_parent, head_created_at, head_body, metadata, created_at,
                                 updated_at, pinned)
      VALUES (:id, :head, :last_seq, :checkpoints, :forked_from_id, :forked_from_seq,
              :head_parent, :head_created_at, :head_body, :metadata, :created_at, :updated_at,
              :pinned)`),
    state: db.prepare(`INSERT INTO ${t.state} (scope, key, value) VALUES (?, ?, ?)`),
  };
  return {
    session: db.transaction((input: ImportInput) => {
      let headBody = 0;
      for (const cp of input.checkpoints) {
        const body = Number(insert.body.run(cp.data).lastInsertRowid);
        const transcript =
          cp.transcript === '[]' ? null : insert.transcript.run(cp.transcript).lastInsertRowid;
        insert.checkpoint.run(
          input.sessionId,
          cp.seq,
          cp.parent,
          cp.createdAt,
          cp.metadata,
          body,
          transcript,
        );
        if (cp.seq === input.head) headBody = body;
      }
      insert.session.run({ ...importedSessionRow(input), head_body: headBody });
    }),
    state: (scope, key, value) => {
      insert.state.run(scope, key, value);
    },
    close: () => db.close(),
  };
}
