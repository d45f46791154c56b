/**
 * The PostgreSQL schema: every object lives in the schema named by `namespace`. The migration
 * steps below change tables and are frozen once released: a step is never edited, a change
 * is a new step. The functions the backend calls are defined once, as they are now, in
 * stored-code.ts, and created anew after the steps of any upgrade.
 */
import { invalidArgument } from '@ckpt/core/adapter';

/** The schema version this package writes and reads. */
export const SCHEMA_VERSION = 9;

/**
 * Schema `namespace` as an SQL identifier. Quoted, so that a namespace PostgreSQL reserves as
 * a keyword (`user`, `order`, `select`, …) names a schema like any other; a namespace is
 * lowercase, so quoting names the same schema as writing it bare.
 */
export function schemaIdentifier(namespace: string): string {
  return `"${namespace}"`;
}

/**
 * Refuse a namespace that names one of the server's own schemas: PostgreSQL will not create
 * a `pg_…` schema, and tables put in `information_schema` would mix with its views.
 */
export function checkOwnSchema(namespace: string): void {
  if (namespace.startsWith('pg_') || namespace === 'information_schema') {
    throw invalidArgument(
      'namespace',
      `namespace ${JSON.stringify(namespace)} names a schema PostgreSQL keeps for itself (pg_… and information_schema); pick another, such as the default 'ckpt'.`,
    );
  }
}

/** Migrations; entry i brings the tables from version i to i + 1. */
export function migrations(namespace: string): string[] {
  const ns = schemaIdentifier(namespace);
  return [
    `
    CREATE TABLE ${ns}.sessions (
      id              text COLLATE "C" PRIMARY KEY,
      head            bigint NOT NULL,
      last_seq        bigint NOT NULL,
      checkpoints     bigint NOT NULL,
      forked_from_id  text COLLATE "C",
      forked_from_seq bigint,
      metadata        text   NOT NULL,  -- the head's, so that listing sessions reads no checkpoint
      created_at      bigint NOT NULL,
      updated_at      bigint NOT NULL
    );
    CREATE INDEX sessions_by_update ON ${ns}.sessions (updated_at, id);

    CREATE TABLE ${ns}.checkpoints (
      session_id text COLLATE "C" NOT NULL,
      seq        bigint NOT NULL,
      parent     bigint,
      created_at bigint NOT NULL,
      metadata   text   NOT NULL,
      PRIMARY KEY (session_id, seq)
    );
    -- Data and transcript items apart, so that listings never read them.
    CREATE TABLE ${ns}.bodies (
      session_id text COLLATE "C" NOT NULL,
      seq        bigint NOT NULL,
      data       text   NOT NULL,
      PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE ${ns}.transcripts (
      session_id text COLLATE "C" NOT NULL,
      seq        bigint NOT NULL,
      items      text   NOT NULL,
      PRIMARY KEY (session_id, seq)
    );
    CREATE TABLE ${ns}.idempotency (
      session_id text COLLATE "C" NOT NULL,
      key        text COLLATE "C" NOT NULL,
      seq        bigint NOT NULL,
      PRIMARY KEY (session_id, key)
    );
    CREATE TABLE ${ns}.state (
      scope text COLLATE "C" NOT NULL,
      key   text COLLATE "C" NOT NULL,
      value text NOT NULL,
      PRIMARY KEY (scope, key)
    );
    CREATE TABLE ${ns}.kv (
      key   text COLLATE "C" PRIMARY KEY,
      value text NOT NULL
    );
    `,

    // Payload columns compress with lz4 where the server has it (PostgreSQL 14 and later, built
    // with lz4, as the common packages and images are): it compresses and expands the
    // multi-kilobyte values agents save several times faster than the default pglz. Elsewhere
    // pglz stays. Only rows written from now on use it; nothing is rewritten.
    `
    DO $do$
    BEGIN
      EXECUTE 'ALTER TABLE ${ns}.bodies ALTER COLUMN data SET COMPRESSION lz4';
      EXECUTE 'ALTER TABLE ${ns}.transcripts ALTER COLUMN items SET COMPRESSION lz4';
      EXECUTE 'ALTER TABLE ${ns}.state ALTER COLUMN value SET COMPRESSION lz4';
      EXECUTE 'ALTER TABLE ${ns}.kv ALTER COLUMN value SET COMPRESSION lz4';
    EXCEPTION WHEN feature_not_supported OR syntax_error THEN
      NULL;
    END $do$;
    `,

    // The session row keeps the head's parent beside the head, so that append can take the
    // next seq with one UPDATE of the row and learn its checkpoint's parent from it (UPDATE …
    // RETURNING returns new values only).
    `
    ALTER TABLE ${ns}.sessions ADD COLUMN head_parent bigint;
    UPDATE ${ns}.sessions s SET head_parent = c.parent
      FROM ${ns}.checkpoints c WHERE c.session_id = s.id AND c.seq = s.head;
    `,

    // The session row keeps the head's creation time too (beside its parent and metadata), so
    // that a load of the head reads the session row and the body: two rows, not three.
    `
    ALTER TABLE ${ns}.sessions ADD COLUMN head_created_at bigint;
    UPDATE ${ns}.sessions s SET head_created_at = c.created_at
      FROM ${ns}.checkpoints c WHERE c.session_id = s.id AND c.seq = s.head;
    `,

    // What a checkpoint needs: a row per earlier checkpoint it names, written only for the
    // checkpoints that name some, so that a session without needs has no row here.
    `
    CREATE TABLE ${ns}.needs (
      session_id text COLLATE "C" NOT NULL,
      seq        bigint NOT NULL,  -- the checkpoint that needs
      needed     bigint NOT NULL,  -- the earlier checkpoint it needs
      PRIMARY KEY (session_id, seq, needed)
    );
    `,

    // Pins: a row per pinned checkpoint, with its note. The session row counts them, so that
    // whether a session may be swept is a column of the row a sweep locks and deletes, which
    // the server checks again on the row's newest version when a writer changed it meanwhile.
    `
    CREATE TABLE ${ns}.pins (
      session_id text COLLATE "C" NOT NULL,
      seq        bigint NOT NULL,
      note       text,
      PRIMARY KEY (session_id, seq)
    );
    ALTER TABLE ${ns}.sessions ADD COLUMN pinned bigint NOT NULL DEFAULT 0;
    `,

    // Values as bytes: checkpoint data, transcript items and state values become bytea (the kv
    // table keeps its text). A value the codecs encoded is held as its header, marked
    // `ckpt1b;`, and its raw bytes instead of their base64; any other value as its UTF-8 bytes.
    // stored_bytes_of makes exactly the bytes storedBytesOf (@ckpt/core) makes of the same
    // text, so that a rewrite or compare-and-set, which compares the bytes of the value it was
    // handed, matches a row written before the change as it matches one written after. Changing
    // a column's type resets its compression, so each change sets lz4 again in the same
    // statement (the table's rewrite then compresses with it) where the server has it.
    `
    CREATE FUNCTION ${ns}.stored_bytes_of(v text) RETURNS bytea
    LANGUAGE sql IMMUTABLE STRICT AS $fn$
      SELECT CASE
        -- Not the encoded form, or a payload that is no whole base64 (decode would fail).
        WHEN m IS NULL OR length(m[2]) % 4 <> 0 THEN convert_to(v, 'UTF8')
        -- Only a payload written canonically comes back as the same text.
        WHEN translate(encode(decode(m[2], 'base64'), 'base64'), E'\\n', '') = m[2]
          THEN convert_to('ckpt1b;' || m[1], 'UTF8') || decode(m[2], 'base64')
        ELSE convert_to(v, 'UTF8')
      END
      FROM regexp_match(v, '^ckpt1;([ -:<-~]*;[ -:<-~]*;)([A-Za-z0-9+/]*={0,2})$') AS m
    $fn$;
    DO $do$
    DECLARE
      v_column text[];
      v_change text;
    BEGIN
      FOREACH v_column SLICE 1 IN ARRAY ARRAY[['bodies', 'data'], ['transcripts', 'items'], ['state', 'value']] LOOP
        v_change := format('ALTER TABLE ${ns}.%I ALTER COLUMN %I TYPE bytea USING ${ns}.stored_bytes_of(%I)',
                           v_column[1], v_column[2], v_column[2]);
        BEGIN
          EXECUTE v_change || format(', ALTER COLUMN %I SET COMPRESSION lz4', v_column[2]);
        EXCEPTION WHEN feature_not_supported OR syntax_error THEN
          EXECUTE v_change;
        END;
      END LOOP;
    END $do$;
    DROP FUNCTION ${ns}.stored_bytes_of(text);
    `,

    // The change log that watch() follows: a row for each change of a session's row (a
    // checkpoint, a rollback, a fork, a prune, a delete) and of a state value, written by
    // triggers in the transaction that makes the change. Ids are taken before commit, so they
    // do not come in commit order; a reader takes the rows in order of their transaction id and
    // only below the oldest transaction still running (pg_snapshot_xmin), past which no row can
    // appear. The log keeps the latest 10,000 changes or more (it lets go of 1,000 at a time);
    // the meta row 'changes_trimmed_through' holds the position of the last row it let go.
    `
    CREATE TABLE ${ns}.changes (
      id         bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
      xid        xid8   NOT NULL DEFAULT pg_current_xact_id(),
      session_id text COLLATE "C" NOT NULL,
      kind       text   NOT NULL,
      seq        bigint
    );
    CREATE INDEX changes_in_commit_order ON ${ns}.changes (xid, id);
    CREATE FUNCTION ${ns}.record_change() RETURNS trigger
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_id bigint;
      v_gone text;
    BEGIN
      IF TG_TABLE_NAME = 'state' THEN
        INSERT INTO ${ns}.changes (session_id, kind)
        VALUES (CASE WHEN TG_OP = 'DELETE' THEN OLD.scope ELSE NEW.scope END, 'state')
        RETURNING id INTO v_id;
      ELSIF TG_OP = 'INSERT' THEN
        INSERT INTO ${ns}.changes (session_id, kind, seq)
        VALUES (NEW.id, CASE WHEN NEW.forked_from_id IS NULL THEN 'checkpoint' ELSE 'fork' END, NEW.head)
        RETURNING id INTO v_id;
      ELSIF TG_OP = 'DELETE' THEN
        INSERT INTO ${ns}.changes (session_id, kind) VALUES (OLD.id, 'delete') RETURNING id INTO v_id;
      ELSE
        INSERT INTO ${ns}.changes (session_id, kind, seq)
        VALUES (NEW.id, CASE WHEN NEW.last_seq <> OLD.last_seq THEN 'checkpoint'
                             WHEN NEW.head <> OLD.head THEN 'rollback' ELSE 'prune' END, NEW.head)
        RETURNING id INTO v_id;
      END IF;
      IF v_id % 1000 = 0 AND v_id > 10000 THEN
        WITH gone AS (DELETE FROM ${ns}.changes WHERE id <= v_id - 10000 RETURNING xid, id)
        SELECT max(lpad(xid::text, 20, '0') || '.' || lpad(id::text, 20, '0')) INTO v_gone FROM gone;
        IF v_gone IS NOT NULL THEN
          INSERT INTO ${ns}.meta (key, value) VALUES ('changes_trimmed_through', v_gone)
          ON CONFLICT (key) DO UPDATE SET value = greatest(${ns}.meta.value, excluded.value);
        END IF;
      END IF;
      RETURN NULL;
    END $fn$;
    CREATE TRIGGER changes_at_insert_or_delete AFTER INSERT OR DELETE ON ${ns}.sessions
      FOR EACH ROW EXECUTE FUNCTION ${ns}.record_change();
    CREATE TRIGGER changes_at_update AFTER UPDATE ON ${ns}.sessions
      FOR EACH ROW WHEN (NEW.last_seq <> OLD.last_seq OR NEW.head <> OLD.head OR NEW.checkpoints < OLD.checkpoints)
      EXECUTE FUNCTION ${ns}.record_change();
    CREATE TRIGGER changes_of_state AFTER INSERT OR UPDATE OR DELETE ON ${ns}.state
      FOR EACH ROW EXECUTE FUNCTION ${ns}.record_change();
    `,

    // Tags: the session row holds them as JSON text (keys ascending; null: none), which reads
    // give back; the tags table holds a row per tag with a copy of the session's updated_at, so
    // that tags_by_update yields the sessions that have a tag in the catalog's order (updated_at
    // descending, then ids descending byte for byte, as "C" orders them). Triggers on the
    // session row keep the table in step with the row, in the transaction that writes the row:
    // every write that sets tags or moves updated_at (a checkpoint, a rollback, a fork, an
    // import, a setTags) and every delete, whatever statement or function makes it. A trigger
    // runs after the row is written, holding its lock, and PL/pgSQL takes a fresh snapshot for
    // each of its statements, so that it sees the tag rows every writer before it committed:
    // a single statement (a checkpoint written directly, a batch, a sweep's delete) reads the
    // other tables as of its start, and could miss the rows a setTags committed meanwhile.
    // Sessions without tags fire none of them (their WHEN is false).
    `
    ALTER TABLE ${ns}.sessions ADD COLUMN tags text;
    CREATE TABLE ${ns}.tags (
      key        text COLLATE "C" NOT NULL,
      value      text COLLATE "C" NOT NULL,
      updated_at bigint NOT NULL,
      session_id text COLLATE "C" NOT NULL,
      PRIMARY KEY (session_id, key)
    );
    CREATE INDEX tags_by_update ON ${ns}.tags (key, value, updated_at DESC, session_id DESC);
    -- How many sessions have a tag, for the planner: a value goes with its key (t7 is a tenant,
    -- never a status), which it would otherwise take for independent, expecting a few times
    -- fewer than there are, and read them all to sort them rather than walk the index. The
    -- dependency of the key on the value corrects that for every value; a list of the most
    -- common pairs (mcv) would take precedence for the pairs on it and leave the others as bad.
    CREATE STATISTICS ${ns}.tags_key_value (dependencies) ON key, value FROM ${ns}.tags;
    CREATE FUNCTION ${ns}.index_tags() RETURNS trigger
    LANGUAGE plpgsql AS $fn$
    BEGIN
      IF TG_OP = 'UPDATE' AND NEW.tags IS NOT DISTINCT FROM OLD.tags THEN
        UPDATE ${ns}.tags t SET updated_at = NEW.updated_at WHERE t.session_id = NEW.id;
        RETURN NULL;
      END IF;
      IF TG_OP <> 'INSERT' THEN
        DELETE FROM ${ns}.tags t WHERE t.session_id = OLD.id;
      END IF;
      IF TG_OP <> 'DELETE' AND NEW.tags IS NOT NULL THEN
        INSERT INTO ${ns}.tags (key, value, updated_at, session_id)
        SELECT j.key, j.value, NEW.updated_at, NEW.id FROM json_each_text(NEW.tags::json) AS j;
      END IF;
      RETURN NULL;
    END $fn$;
    CREATE TRIGGER tags_at_insert AFTER INSERT ON ${ns}.sessions
      FOR EACH ROW WHEN (NEW.tags IS NOT NULL) EXECUTE FUNCTION ${ns}.index_tags();
    CREATE TRIGGER tags_at_update AFTER UPDATE ON ${ns}.sessions
      FOR EACH ROW WHEN (NEW.tags IS DISTINCT FROM OLD.tags
                         OR (NEW.tags IS NOT NULL AND NEW.updated_at <> OLD.updated_at))
      EXECUTE FUNCTION ${ns}.index_tags();
    CREATE TRIGGER tags_at_delete AFTER DELETE ON ${ns}.sessions
      FOR EACH ROW WHEN (OLD.tags IS NOT NULL) EXECUTE FUNCTION ${ns}.index_tags();
    `,
  ];
}
