/**
 * The SQLite schema, per namespace (every table name starts with `<namespace>_`, so several
 * namespaces share one file). Checkpoint payloads and transcript items live in tables of their
 * own, so that listing checkpoints or sessions never reads them. Those and state values are
 * stored as bytes (stored-bytes.ts in @ckpt/core): an encoded value's own bytes, JSON as its
 * UTF-8.
 */
import { storedBytesOf } from '@ckpt/core/adapter';
import { sqlTables } from '@ckpt/core/sql';

/** The schema version this package writes and reads. */
export const SCHEMA_VERSION = 6;

/** The tables of namespace `ns` (validated: `[a-z][a-z0-9_]*`), each named `<ns>_<table>`. */
export function tables(ns: string) {
  return sqlTables(`${ns}_`);
}

/**
 * Migrations of the native backend; entry i brings the schema from version i to i + 1. A step
 * is frozen once released: a change is a new step.
 */
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
      -- The head checkpoint's own columns, copied here so that loading the head reads one
      -- session row and one body, and listing sessions reads no checkpoint.
      head_parent     INTEGER,
      head_created_at INTEGER NOT NULL,
      head_body       INTEGER NOT NULL,
      metadata        TEXT    NOT NULL,
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
      body       INTEGER NOT NULL,  -- ${t.bodies}.id
      transcript INTEGER,           -- ${t.transcripts}.id, null when the checkpoint has no items
      PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;

    -- Payloads and transcript items live in rowid tables of their own: appends go to the end
    -- of one b-tree each, large rows read fastest from a rowid table, and listings never
    -- touch them.
    CREATE TABLE ${t.bodies} (
      id   INTEGER PRIMARY KEY,
      data TEXT    NOT NULL
    );
    CREATE TABLE ${t.transcripts} (
      id    INTEGER PRIMARY KEY,
      items TEXT    NOT NULL
    );

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

    // What a checkpoint needs: a row per earlier checkpoint it names, written only for the
    // checkpoints that name some, so that a session without needs has no row here.
    `
    CREATE TABLE ${t.needs} (
      session_id TEXT    NOT NULL,
      seq        INTEGER NOT NULL,  -- the checkpoint that needs
      needed     INTEGER NOT NULL,  -- the earlier checkpoint it needs
      PRIMARY KEY (session_id, seq, needed)
    ) WITHOUT ROWID;
    `,

    // Pins: a row per pinned checkpoint, with its note. The session row counts them, so that
    // whether a session may be swept is a column of the row a sweep deletes.
    `
    CREATE TABLE ${t.pins} (
      session_id TEXT    NOT NULL,
      seq        INTEGER NOT NULL,
      note       TEXT,
      PRIMARY KEY (session_id, seq)
    ) WITHOUT ROWID;
    ALTER TABLE ${t.sessions} ADD COLUMN pinned INTEGER NOT NULL DEFAULT 0;
    `,

    // Values as bytes: checkpoint data, transcript items and state values. SQLite keeps bytes
    // in a TEXT column as they are, so new writes alone needed no change of table; but a BLOB
    // never equals TEXT in SQLite, so the rows written as text are converted too, for a
    // rewrite or compare-and-set (which compares the bytes of the value it was handed) to find
    // them. Converting writes every row anyway, so each table is made again with a column
    // that says BLOB, its rows converted as they are copied, their ids kept.
    [
      remadeWithBytes(t.bodies, '(id INTEGER PRIMARY KEY, data BLOB NOT NULL)', 'id', 'data'),
      remadeWithBytes(
        t.transcripts,
        '(id INTEGER PRIMARY KEY, items BLOB NOT NULL)',
        'id',
        'items',
      ),
      remadeWithBytes(
        t.state,
        `(scope TEXT NOT NULL, key TEXT NOT NULL, value BLOB NOT NULL,
          PRIMARY KEY (scope, key)) WITHOUT ROWID`,
        'scope, key',
        'value',
      ),
    ].join('\n'),

    // The change log that watch() follows: a row for each change of a session's row (a
    // checkpoint, a rollback, a fork, a prune, a delete) and of a state value, written by
    // triggers in the transaction that makes the change, so that every statement and every
    // process records it. SQLite commits one writer at a time, so the ids come in the order
    // the changes commit; a rowid above the highest (never AUTOINCREMENT, whose sequence table
    // would outlive the namespace): the trim never removes the newest row. The log keeps the latest 10,000 changes or more (it lets go of 1,000
    // at a time); the meta row 'changes_trimmed_through' says up to which id it let go.
    `
    CREATE TABLE ${t.changes} (
      id         INTEGER PRIMARY KEY,
      session_id TEXT    NOT NULL,
      kind       TEXT    NOT NULL,
      seq        INTEGER
    );
    CREATE TRIGGER ${t.changes}_at_insert AFTER INSERT ON ${t.sessions} BEGIN
      INSERT INTO ${t.changes} (session_id, kind, seq)
      VALUES (new.id, CASE WHEN new.forked_from_id IS NULL THEN 'checkpoint' ELSE 'fork' END, new.head);
    END;
    CREATE TRIGGER ${t.changes}_at_update AFTER UPDATE ON ${t.sessions}
      WHEN new.last_seq <> old.last_seq OR new.head <> old.head OR new.checkpoints < old.checkpoints
    BEGIN
      INSERT INTO ${t.changes} (session_id, kind, seq)
      VALUES (new.id, CASE WHEN new.last_seq <> old.last_seq THEN 'checkpoint'
                           WHEN new.head <> old.head THEN 'rollback' ELSE 'prune' END, new.head);
    END;
    CREATE TRIGGER ${t.changes}_at_delete AFTER DELETE ON ${t.sessions} BEGIN
      INSERT INTO ${t.changes} (session_id, kind, seq) VALUES (old.id, 'delete', NULL);
    END;
    ${[
      ['insert', 'new'],
      ['update', 'new'],
      ['delete', 'old'],
    ]
      .map(
        ([event, row]) => `
    CREATE TRIGGER ${t.changes}_at_state_${event} AFTER ${event!.toUpperCase()} ON ${t.state} BEGIN
      INSERT INTO ${t.changes} (session_id, kind, seq) VALUES (${row}.scope, 'state', NULL);
    END;`,
      )
      .join('')}
    CREATE TRIGGER ${t.changes}_trim AFTER INSERT ON ${t.changes}
      WHEN new.id % 1000 = 0 AND new.id > 10000
    BEGIN
      DELETE FROM ${t.changes} WHERE id <= new.id - 10000;
      INSERT INTO ${t.meta} (key, value) VALUES ('changes_trimmed_through', new.id - 10000)
        ON CONFLICT (key) DO UPDATE SET value = excluded.value;
    END;
    `,

    // Tags: the session row's column says what they are (JSON text of the object, keys
    // ascending; null: none), and the tags table indexes them, a row a pair, with a copy of
    // the session's updated_at so that a listing by tag walks its index in the catalog's order
    // and never reads a session that does not match. Triggers keep the table equal to the
    // column, and its updated_at to the row's, whatever statement or process writes the row:
    // a process of version 5 still running after this step moves updated_at and deletes
    // sessions too. A session without tags costs them nothing but the check.
    `
    ALTER TABLE ${t.sessions} ADD COLUMN tags TEXT;
    CREATE TABLE ${t.tags} (
      key        TEXT    NOT NULL,
      value      TEXT    NOT NULL,
      updated_at INTEGER NOT NULL,
      session_id TEXT    NOT NULL,
      PRIMARY KEY (session_id, key)
    ) WITHOUT ROWID;
    CREATE INDEX ${t.tags}_by_tag ON ${t.tags} (key, value, updated_at DESC, session_id DESC);
    CREATE TRIGGER ${t.tags}_at_insert AFTER INSERT ON ${t.sessions} WHEN new.tags IS NOT NULL
    BEGIN
      INSERT INTO ${t.tags} (key, value, updated_at, session_id)
        SELECT key, value, new.updated_at, new.id FROM json_each(new.tags);
    END;
    CREATE TRIGGER ${t.tags}_at_retag AFTER UPDATE OF tags ON ${t.sessions}
      WHEN new.tags IS NOT old.tags
    BEGIN
      DELETE FROM ${t.tags} WHERE session_id = old.id;
      INSERT INTO ${t.tags} (key, value, updated_at, session_id)
        SELECT key, value, new.updated_at, new.id FROM json_each(new.tags);
    END;
    CREATE TRIGGER ${t.tags}_at_update AFTER UPDATE OF updated_at ON ${t.sessions}
      WHEN new.updated_at IS NOT old.updated_at AND new.tags IS NOT NULL
    BEGIN
      UPDATE ${t.tags} SET updated_at = new.updated_at WHERE session_id = new.id;
    END;
    CREATE TRIGGER ${t.tags}_at_delete AFTER DELETE ON ${t.sessions} WHEN old.tags IS NOT NULL
    BEGIN
      DELETE FROM ${t.tags} WHERE session_id = old.id;
    END;
    `,
  ];
}

/**
 * Step 4's SQL for one table: make `table` again as `definition` says (its value column a
 * BLOB), copying each row, its `keys` as they are and its `value` converted to the bytes a
 * write stores now. Frozen with that step.
 */
function remadeWithBytes(table: string, definition: string, keys: string, value: string): string {
  return `
    CREATE TABLE ${table}_as_bytes ${definition};
    INSERT INTO ${table}_as_bytes (${keys}, ${value})
      SELECT ${keys}, ckpt_stored_bytes(${value}) FROM ${table};
    DROP TABLE ${table};
    ALTER TABLE ${table}_as_bytes RENAME TO ${table};`;
}

/**
 * The SQL functions the steps call, by name; migrate.ts defines them on the connection that
 * migrates. Each is frozen with the steps that call it.
 */
export const STEP_FUNCTIONS: Record<string, (value: unknown) => unknown> = {
  // Step 4: a value's text as the bytes a write stores for it now; bytes stay as they are.
  ckpt_stored_bytes: (value) => (typeof value === 'string' ? storedBytesOf(value) : value),
};

/** Migrations of the KV store. */
export function kvMigrations(ns: string): string[] {
  const { kv } = tables(ns);
  return [`CREATE TABLE ${kv} (key TEXT NOT NULL PRIMARY KEY, value TEXT NOT NULL) WITHOUT ROWID;`];
}
