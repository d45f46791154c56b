/**
 * The SQLite schema, per namespace (every table name starts with `<namespace>_`, so several
 * namespaces share one file). Checkpoint payloads and transcript items live in tables of their
 * own, so that listing checkpoints or sessions never reads them.
 */

/** The schema version this package writes and reads. */
export const SCHEMA_VERSION = 1;

/** The tables of the native backend for namespace `ns` (validated: `[a-z][a-z0-9_]*`). */
export function tables(ns: string) {
  return {
    meta: `${ns}_meta`,
    sessions: `${ns}_sessions`,
    checkpoints: `${ns}_checkpoints`,
    payloads: `${ns}_payloads`,
    transcripts: `${ns}_transcripts`,
    idempotency: `${ns}_idempotency`,
    state: `${ns}_state`,
    kv: `${ns}_kv`,
  };
}

/** Migrations of the native backend; entry i brings the schema from version i to i + 1. */
export function checkpointMigrations(ns: string): string[] {
  const t = tables(ns);
  return [
    `
    CREATE TABLE ${t.sessions} (
      id              TEXT    NOT NULL PRIMARY KEY,
      head            INTEGER NOT NULL,
      last_seq        INTEGER NOT NULL,
      checkpoints     INTEGER NOT NULL,
      forked_from_id  TEXT,
      forked_from_seq INTEGER,
      metadata        TEXT    NOT NULL,  -- the head's, so that listing sessions reads no checkpoint
      created_at      INTEGER NOT NULL,
      updated_at      INTEGER NOT NULL
    ) WITHOUT ROWID;
    CREATE INDEX ${t.sessions}_by_update ON ${t.sessions} (updated_at DESC, id DESC);

    CREATE TABLE ${t.checkpoints} (
      session_id TEXT    NOT NULL,
      seq        INTEGER NOT NULL,
      parent     INTEGER,
      created_at INTEGER NOT NULL,
      metadata   TEXT    NOT NULL,
      PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;

    -- A rowid table: SQLite reads large rows faster from one than from a WITHOUT ROWID tree.
    CREATE TABLE ${t.payloads} (
      session_id TEXT    NOT NULL,
      seq        INTEGER NOT NULL,
      data       TEXT    NOT NULL,
      PRIMARY KEY (session_id, seq)
    );

    -- Only checkpoints that carry transcript items have a row, so that a transcript page
    -- reads neither payloads nor empty rows.
    CREATE TABLE ${t.transcripts} (
      session_id TEXT    NOT NULL,
      seq        INTEGER NOT NULL,
      items      TEXT    NOT NULL,
      PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;

    CREATE TABLE ${t.idempotency} (
      session_id TEXT    NOT NULL,
      key        TEXT    NOT NULL,
      seq        INTEGER NOT NULL,
      PRIMARY KEY (session_id, key)
    ) WITHOUT ROWID;

    CREATE TABLE ${t.state} (
      scope TEXT NOT NULL,
      key   TEXT NOT NULL,
      value TEXT NOT NULL,
      PRIMARY KEY (scope, key)
    ) WITHOUT ROWID;
    `,
  ];
}

/** Migrations of the KV store. */
export function kvMigrations(ns: string): string[] {
  const { kv } = tables(ns);
  return [`CREATE TABLE ${kv} (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`];
}
