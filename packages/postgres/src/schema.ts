/**
 * The PostgreSQL schema: every object lives in the schema named by `namespace`. Each mutation
 * is one function, so that it costs one round trip and holds no session state between
 * statements (it works through a pool and through PgBouncer in transaction mode).
 */
import { invalidArgument, SQL_TABLES } from '@ckpt/core';

/** The schema version this package writes and reads. */
export const SCHEMA_VERSION = 4;

/** The tables this package creates in schema `ns`. */
export const TABLES = SQL_TABLES;

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

/** Migrations; entry i brings the schema from version i to i + 1. */
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

    -- append: idempotency, expectedHead, then seq = last + 1 under the session's row lock.
    -- Returns (status, seq, parent, head, data, metadata, created_at).
    CREATE FUNCTION ${ns}.append(p_id text, p_data text, p_metadata text, p_transcript text,
                                 p_check_head boolean, p_expected_head bigint, p_key text, p_now bigint)
    RETURNS TABLE (status text, seq bigint, parent bigint, head bigint, data text, metadata text, created_at bigint)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_head bigint;
      v_last bigint;
      v_seen bigint;
      v_seq  bigint;
    BEGIN
      LOOP
        SELECT s.head, s.last_seq INTO v_head, v_last FROM ${ns}.sessions s WHERE s.id = p_id FOR UPDATE;
        EXIT WHEN FOUND;
        IF p_check_head AND p_expected_head IS NOT NULL THEN
          RETURN QUERY SELECT 'conflict', NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::bigint;
          RETURN;
        END IF;
        -- A new session; a concurrent creator makes this insert wait, then do nothing, and
        -- the loop locks the row it created.
        INSERT INTO ${ns}.sessions AS s (id, head, last_seq, checkpoints, metadata, created_at, updated_at)
        VALUES (p_id, 0, 0, 0, p_metadata, p_now, p_now) ON CONFLICT (id) DO NOTHING;
        IF FOUND THEN
          v_head := NULL;
          v_last := 0;
          EXIT;
        END IF;
      END LOOP;

      IF p_key IS NOT NULL THEN
        SELECT i.seq INTO v_seen FROM ${ns}.idempotency i WHERE i.session_id = p_id AND i.key = p_key;
        IF FOUND THEN
          RETURN QUERY
            SELECT 'replayed', v_seen, c.parent, NULL::bigint, b.data, c.metadata, c.created_at
              FROM (SELECT 1) AS one
              LEFT JOIN ${ns}.checkpoints c ON c.session_id = p_id AND c.seq = v_seen
              LEFT JOIN ${ns}.bodies b ON b.session_id = p_id AND b.seq = v_seen;
          RETURN;
        END IF;
      END IF;

      IF p_check_head AND v_head IS DISTINCT FROM p_expected_head THEN
        RETURN QUERY SELECT 'conflict', NULL::bigint, NULL::bigint, v_head, NULL::text, NULL::text, NULL::bigint;
        RETURN;
      END IF;

      v_seq := v_last + 1;
      INSERT INTO ${ns}.checkpoints VALUES (p_id, v_seq, v_head, p_now, p_metadata);
      INSERT INTO ${ns}.bodies VALUES (p_id, v_seq, p_data);
      IF p_transcript <> '[]' THEN
        INSERT INTO ${ns}.transcripts VALUES (p_id, v_seq, p_transcript);
      END IF;
      UPDATE ${ns}.sessions s
         SET head = v_seq, last_seq = v_seq, checkpoints = s.checkpoints + 1,
             metadata = p_metadata, updated_at = p_now
       WHERE s.id = p_id;
      IF p_key IS NOT NULL THEN
        INSERT INTO ${ns}.idempotency VALUES (p_id, p_key, v_seq);
      END IF;
      RETURN QUERY SELECT 'written', v_seq, v_head, v_seq, NULL::text, NULL::text, p_now;
    END $fn$;

    CREATE FUNCTION ${ns}.rollback(p_id text, p_seq bigint, p_check_head boolean, p_expected_head bigint, p_now bigint)
    RETURNS TABLE (status text, head bigint)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_head bigint;
      v_metadata text;
    BEGIN
      SELECT s.head INTO v_head FROM ${ns}.sessions s WHERE s.id = p_id FOR UPDATE;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_session', NULL::bigint; RETURN; END IF;
      IF p_check_head AND v_head IS DISTINCT FROM p_expected_head THEN
        RETURN QUERY SELECT 'conflict', v_head; RETURN;
      END IF;
      SELECT c.metadata INTO v_metadata FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = p_seq;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_seq', v_head; RETURN; END IF;
      UPDATE ${ns}.sessions s SET head = p_seq, metadata = v_metadata, updated_at = p_now WHERE s.id = p_id;
      RETURN QUERY SELECT 'done', p_seq;
    END $fn$;

    -- Planned afresh on each call: a cached generic plan of the recursive walk could scan the
    -- whole table at every step.
    CREATE FUNCTION ${ns}.fork(p_id text, p_at bigint, p_new text, p_now bigint)
    RETURNS TABLE (status text, seq bigint)
    LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $fn$
    DECLARE
      v_head bigint;
      v_at bigint;
      v_metadata text;
      v_count bigint;
    BEGIN
      -- FOR SHARE keeps the source from being pruned or deleted while it is copied.
      SELECT s.head INTO v_head FROM ${ns}.sessions s WHERE s.id = p_id FOR SHARE;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_session', NULL::bigint; RETURN; END IF;
      v_at := coalesce(p_at, v_head);
      SELECT c.metadata INTO v_metadata FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = v_at;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_seq', NULL::bigint; RETURN; END IF;
      INSERT INTO ${ns}.sessions (id, head, last_seq, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at)
      VALUES (p_new, v_at, v_at, 0, p_id, v_at, v_metadata, p_now, p_now) ON CONFLICT (id) DO NOTHING;
      IF NOT FOUND THEN RETURN QUERY SELECT 'exists', NULL::bigint; RETURN; END IF;
      WITH RECURSIVE chain (seq, parent) AS (
        SELECT c.seq, c.parent FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = v_at
        UNION ALL
        SELECT c.seq, c.parent FROM chain JOIN ${ns}.checkpoints c ON c.session_id = p_id AND c.seq = chain.parent
      )
      INSERT INTO ${ns}.checkpoints
      SELECT p_new, c.seq, c.parent, c.created_at, c.metadata
        FROM chain JOIN ${ns}.checkpoints c ON c.session_id = p_id AND c.seq = chain.seq;
      GET DIAGNOSTICS v_count = ROW_COUNT;
      INSERT INTO ${ns}.bodies
      SELECT p_new, b.seq, b.data FROM ${ns}.checkpoints c
        JOIN ${ns}.bodies b ON b.session_id = p_id AND b.seq = c.seq WHERE c.session_id = p_new;
      INSERT INTO ${ns}.transcripts
      SELECT p_new, x.seq, x.items FROM ${ns}.checkpoints c
        JOIN ${ns}.transcripts x ON x.session_id = p_id AND x.seq = c.seq WHERE c.session_id = p_new;
      UPDATE ${ns}.sessions s SET checkpoints = v_count WHERE s.id = p_new;
      RETURN QUERY SELECT 'done', v_at;
    END $fn$;

    CREATE FUNCTION ${ns}.prune(p_id text, p_keep bigint)
    RETURNS bigint
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_head bigint;
      v_below bigint;
      v_removed bigint;
    BEGIN
      SELECT s.head INTO v_head FROM ${ns}.sessions s WHERE s.id = p_id FOR UPDATE;
      IF NOT FOUND THEN RETURN 0; END IF;
      -- The keepLast-th highest seq: everything below it goes, except the head.
      SELECT c.seq INTO v_below FROM ${ns}.checkpoints c WHERE c.session_id = p_id
       ORDER BY c.seq DESC OFFSET p_keep - 1 LIMIT 1;
      IF NOT FOUND THEN RETURN 0; END IF;
      DELETE FROM ${ns}.bodies b WHERE b.session_id = p_id AND b.seq < v_below AND b.seq <> v_head;
      DELETE FROM ${ns}.transcripts x WHERE x.session_id = p_id AND x.seq < v_below AND x.seq <> v_head;
      DELETE FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq < v_below AND c.seq <> v_head;
      GET DIAGNOSTICS v_removed = ROW_COUNT;
      UPDATE ${ns}.sessions s SET checkpoints = s.checkpoints - v_removed WHERE s.id = p_id;
      RETURN v_removed;
    END $fn$;

    -- Reads with joins or recursion are functions too: PL/pgSQL keeps their plans for the life
    -- of a server connection, where a plain statement would be planned on every call.
    CREATE FUNCTION ${ns}.load(p_id text, p_seq bigint)
    RETURNS TABLE (seq bigint, parent bigint, created_at bigint, metadata text, data text)
    LANGUAGE plpgsql STABLE AS $fn$
    BEGIN
      IF p_seq IS NULL THEN
        SELECT s.head INTO p_seq FROM ${ns}.sessions s WHERE s.id = p_id;
      END IF;
      RETURN QUERY
        SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
          FROM ${ns}.checkpoints c JOIN ${ns}.bodies b ON b.session_id = c.session_id AND b.seq = c.seq
         WHERE c.session_id = p_id AND c.seq = p_seq;
    END $fn$;

    -- A walk up the parents, one primary-key lookup a step: its cost follows the steps taken,
    -- not the size of the session, whatever plan is cached.
    CREATE FUNCTION ${ns}.lineage(p_id text, p_from bigint, p_limit bigint, p_transcript boolean)
    RETURNS TABLE (seq bigint, parent bigint, created_at bigint, transcript text)
    LANGUAGE plpgsql STABLE AS $fn$
    DECLARE
      v_seq bigint := p_from;
      v_steps bigint := 0;
    BEGIN
      IF v_seq IS NULL THEN
        SELECT s.head INTO v_seq FROM ${ns}.sessions s WHERE s.id = p_id;
      END IF;
      WHILE v_seq IS NOT NULL AND v_steps < p_limit LOOP
        SELECT c.seq, c.parent, c.created_at INTO seq, parent, created_at
          FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = v_seq;
        EXIT WHEN NOT FOUND;
        transcript := NULL;
        IF p_transcript THEN
          SELECT x.items INTO transcript FROM ${ns}.transcripts x WHERE x.session_id = p_id AND x.seq = v_seq;
          transcript := coalesce(transcript, '[]');
        END IF;
        RETURN NEXT;
        v_seq := parent;
        v_steps := v_steps + 1;
      END LOOP;
    END $fn$;

    CREATE FUNCTION ${ns}.delete_session(p_id text)
    RETURNS boolean
    LANGUAGE plpgsql AS $fn$
    BEGIN
      DELETE FROM ${ns}.sessions s WHERE s.id = p_id;
      IF NOT FOUND THEN RETURN false; END IF;
      DELETE FROM ${ns}.checkpoints c WHERE c.session_id = p_id;
      DELETE FROM ${ns}.bodies b WHERE b.session_id = p_id;
      DELETE FROM ${ns}.transcripts x WHERE x.session_id = p_id;
      DELETE FROM ${ns}.idempotency i WHERE i.session_id = p_id;
      RETURN true;
    END $fn$;
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

    // append takes the next seq with one UPDATE of the session row, instead of locking the row
    // with SELECT … FOR UPDATE and then updating it: one row version and one WAL record fewer
    // per checkpoint. UPDATE … RETURNING returns new values only, so the row keeps the head's
    // parent beside the head: setting it from the old head in the same UPDATE is how append
    // learns its checkpoint's parent. rollback and fork keep it true as well.
    `
    ALTER TABLE ${ns}.sessions ADD COLUMN head_parent bigint;
    UPDATE ${ns}.sessions s SET head_parent = c.parent
      FROM ${ns}.checkpoints c WHERE c.session_id = s.id AND c.seq = s.head;

    ${headFunctions(ns, false)}
    `,

    // The session row keeps the head's creation time too (beside its parent and metadata), so
    // that a load of the head reads the session row and the body: two rows, not three.
    `
    ALTER TABLE ${ns}.sessions ADD COLUMN head_created_at bigint;
    UPDATE ${ns}.sessions s SET head_created_at = c.created_at
      FROM ${ns}.checkpoints c WHERE c.session_id = s.id AND c.seq = s.head;
    ${headFunctions(ns, true)}
    CREATE OR REPLACE FUNCTION ${ns}.load(p_id text, p_seq bigint)
    RETURNS TABLE (seq bigint, parent bigint, created_at bigint, metadata text, data text)
    LANGUAGE plpgsql STABLE AS $fn$
    BEGIN
      -- The head's parent, time and metadata are in its session row: only its body is read beside.
      IF p_seq IS NULL THEN
        RETURN QUERY
          SELECT s.head, s.head_parent, s.head_created_at, s.metadata, b.data
            FROM ${ns}.sessions s JOIN ${ns}.bodies b ON b.session_id = s.id AND b.seq = s.head
           WHERE s.id = p_id;
      ELSE
        RETURN QUERY
          SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
            FROM ${ns}.checkpoints c JOIN ${ns}.bodies b ON b.session_id = c.session_id AND b.seq = c.seq
           WHERE c.session_id = p_id AND c.seq = p_seq;
      END IF;
    END $fn$;
    `,
  ];
}

// The functions that move a session's head, as of version 3: each keeps the head's parent (and
// its metadata) in the session row. From version 4 (`headTime`) they keep its creation time too.
function headFunctions(ns: string, headTime: boolean): string {
  return [appendFunction, rollbackFunction, forkFunction].map((f) => f(ns, headTime)).join('');
}

function appendFunction(ns: string, headTime: boolean): string {
  return `
    CREATE OR REPLACE FUNCTION ${ns}.append(p_id text, p_data text, p_metadata text, p_transcript text,
                                 p_check_head boolean, p_expected_head bigint, p_key text, p_now bigint)
    RETURNS TABLE (status text, seq bigint, parent bigint, head bigint, data text, metadata text, created_at bigint)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_parent bigint;
      v_seen bigint;
      v_seq bigint;
    BEGIN
      LOOP
        IF p_key IS NOT NULL THEN
          -- A concurrent call with the same key waits here until the first one commits, then
          -- finds the key it wrote.
          PERFORM FROM ${ns}.sessions s WHERE s.id = p_id FOR UPDATE;
          SELECT i.seq INTO v_seen FROM ${ns}.idempotency i WHERE i.session_id = p_id AND i.key = p_key;
          IF FOUND THEN
            RETURN QUERY
              SELECT 'replayed', v_seen, c.parent, NULL::bigint, b.data, c.metadata, c.created_at
                FROM (SELECT 1) AS one
                LEFT JOIN ${ns}.checkpoints c ON c.session_id = p_id AND c.seq = v_seen
                LEFT JOIN ${ns}.bodies b ON b.session_id = p_id AND b.seq = v_seen;
            RETURN;
          END IF;
        END IF;

        -- The next seq, under the row lock the UPDATE takes; a concurrent writer makes it wait
        -- and then check its WHERE against the row that writer left.
        UPDATE ${ns}.sessions s
           SET head_parent = s.head, head = s.last_seq + 1, last_seq = s.last_seq + 1,
               checkpoints = s.checkpoints + 1, metadata = p_metadata, updated_at = p_now${
                 headTime ? ', head_created_at = p_now' : ''
               }
         WHERE s.id = p_id AND (NOT p_check_head OR s.head IS NOT DISTINCT FROM p_expected_head)
        RETURNING s.head, s.head_parent INTO v_seq, v_parent;
        EXIT WHEN FOUND;

        -- Nothing updated: the head is not the expected one, or there is no session (yet).
        SELECT s.head INTO v_parent FROM ${ns}.sessions s WHERE s.id = p_id;
        IF FOUND THEN
          IF p_check_head AND v_parent IS DISTINCT FROM p_expected_head THEN
            RETURN QUERY SELECT 'conflict', NULL::bigint, NULL::bigint, v_parent, NULL::text, NULL::text, NULL::bigint;
            RETURN;
          END IF;
          CONTINUE;  -- created or moved since the UPDATE looked: take the next seq again
        END IF;
        IF p_check_head AND p_expected_head IS NOT NULL THEN
          RETURN QUERY SELECT 'conflict', NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::bigint;
          RETURN;
        END IF;
        -- A new session; a concurrent creator makes this insert wait, then do nothing, and the
        -- loop goes round again on the row it created.
        INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata, created_at, updated_at${
          headTime ? ', head_created_at' : ''
        })
        VALUES (p_id, 1, NULL, 1, 1, p_metadata, p_now, p_now${headTime ? ', p_now' : ''}) ON CONFLICT (id) DO NOTHING;
        IF FOUND THEN
          v_seq := 1;
          v_parent := NULL;
          EXIT;
        END IF;
      END LOOP;

      INSERT INTO ${ns}.checkpoints VALUES (p_id, v_seq, v_parent, p_now, p_metadata);
      INSERT INTO ${ns}.bodies VALUES (p_id, v_seq, p_data);
      IF p_transcript <> '[]' THEN
        INSERT INTO ${ns}.transcripts VALUES (p_id, v_seq, p_transcript);
      END IF;
      IF p_key IS NOT NULL THEN
        INSERT INTO ${ns}.idempotency VALUES (p_id, p_key, v_seq);
      END IF;
      RETURN QUERY SELECT 'written', v_seq, v_parent, v_seq, NULL::text, NULL::text, p_now;
    END $fn$;
  `;
}

function rollbackFunction(ns: string, headTime: boolean): string {
  return `
    CREATE OR REPLACE FUNCTION ${ns}.rollback(p_id text, p_seq bigint, p_check_head boolean, p_expected_head bigint, p_now bigint)
    RETURNS TABLE (status text, head bigint)
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_head bigint;
      v_parent bigint;
      v_metadata text;
      v_created bigint;
    BEGIN
      SELECT s.head INTO v_head FROM ${ns}.sessions s WHERE s.id = p_id FOR UPDATE;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_session', NULL::bigint; RETURN; END IF;
      IF p_check_head AND v_head IS DISTINCT FROM p_expected_head THEN
        RETURN QUERY SELECT 'conflict', v_head; RETURN;
      END IF;
      SELECT c.parent, c.metadata, c.created_at INTO v_parent, v_metadata, v_created
        FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = p_seq;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_seq', v_head; RETURN; END IF;
      UPDATE ${ns}.sessions s SET head = p_seq, head_parent = v_parent, metadata = v_metadata, updated_at = p_now${
        headTime ? ', head_created_at = v_created' : ''
      }
       WHERE s.id = p_id;
      RETURN QUERY SELECT 'done', p_seq;
    END $fn$;
  `;
}

function forkFunction(ns: string, headTime: boolean): string {
  return `
    CREATE OR REPLACE FUNCTION ${ns}.fork(p_id text, p_at bigint, p_new text, p_now bigint)
    RETURNS TABLE (status text, seq bigint)
    LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $fn$
    DECLARE
      v_head bigint;
      v_at bigint;
      v_parent bigint;
      v_metadata text;
      v_created bigint;
      v_count bigint;
    BEGIN
      -- FOR SHARE keeps the source from being pruned or deleted while it is copied.
      SELECT s.head INTO v_head FROM ${ns}.sessions s WHERE s.id = p_id FOR SHARE;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_session', NULL::bigint; RETURN; END IF;
      v_at := coalesce(p_at, v_head);
      SELECT c.parent, c.metadata, c.created_at INTO v_parent, v_metadata, v_created
        FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = v_at;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_seq', NULL::bigint; RETURN; END IF;
      INSERT INTO ${ns}.sessions (id, head, head_parent, last_seq, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at${
        headTime ? ', head_created_at' : ''
      })
      VALUES (p_new, v_at, v_parent, v_at, 0, p_id, v_at, v_metadata, p_now, p_now${headTime ? ', v_created' : ''}) ON CONFLICT (id) DO NOTHING;
      IF NOT FOUND THEN RETURN QUERY SELECT 'exists', NULL::bigint; RETURN; END IF;
      WITH RECURSIVE chain (seq, parent) AS (
        SELECT c.seq, c.parent FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = v_at
        UNION ALL
        SELECT c.seq, c.parent FROM chain JOIN ${ns}.checkpoints c ON c.session_id = p_id AND c.seq = chain.parent
      )
      INSERT INTO ${ns}.checkpoints
      SELECT p_new, c.seq, c.parent, c.created_at, c.metadata
        FROM chain JOIN ${ns}.checkpoints c ON c.session_id = p_id AND c.seq = chain.seq;
      GET DIAGNOSTICS v_count = ROW_COUNT;
      INSERT INTO ${ns}.bodies
      SELECT p_new, b.seq, b.data FROM ${ns}.checkpoints c
        JOIN ${ns}.bodies b ON b.session_id = p_id AND b.seq = c.seq WHERE c.session_id = p_new;
      INSERT INTO ${ns}.transcripts
      SELECT p_new, x.seq, x.items FROM ${ns}.checkpoints c
        JOIN ${ns}.transcripts x ON x.session_id = p_id AND x.seq = c.seq WHERE c.session_id = p_new;
      UPDATE ${ns}.sessions s SET checkpoints = v_count WHERE s.id = p_new;
      RETURN QUERY SELECT 'done', v_at;
    END $fn$;
  `;
}
