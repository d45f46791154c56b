/**
 * The functions earlier schema versions defined otherwise (those that moved a session's head,
 * those that took or returned data and transcripts as text, and those that knew no tags),
 * frozen here so that the upgrade tests can write sessions through an older schema's own
 * calls. The functions no version changed since the first are the package's own
 * (stored-code.ts).
 */
import type pg from 'pg';
import { migrations, schemaIdentifier } from '../src/schema.js';
import { functions } from '../src/stored-code.js';

/** Make schema `namespace` as version `version`'s migrations and functions left it, through `admin`. */
export async function writeOldSchema(
  admin: pg.Pool,
  namespace: string,
  version: number,
): Promise<void> {
  await admin.query(`CREATE SCHEMA ${namespace}`);
  await admin.query(`CREATE TABLE ${namespace}.meta (key text PRIMARY KEY, value text NOT NULL)`);
  for (const step of migrations(namespace).slice(0, version)) await admin.query(step);
  await admin.query(oldFunctions(namespace, version));
  await admin.query(`INSERT INTO ${namespace}.meta VALUES ('schema_version', $1)`, [version]);
}

/** Every function of schema `namespace` as version `version` (1 to 8) left it. */
export function oldFunctions(namespace: string, version: number): string {
  const ns = schemaIdentifier(namespace);
  const old =
    version < 3
      ? versionOne(ns)
      : version < 4
        ? versionThree(ns)
        : version < 6
          ? versionFour(ns)
          : '';
  return functions(namespace) + versionEight(ns) + (version < 7 ? versionSix(ns) : '') + old;
}

// Version 8 (as 7): sessions have no tags; append takes no tags, and fork copies none. These
// replace the functions that do. Versions before it change them further below.
function versionEight(ns: string): string {
  return `
    DROP FUNCTION ${ns}.append(text, bytea, text, bytea, boolean, bigint, text, bigint, text, boolean, text);

    -- append: idempotency, expectedHead, then seq = last + 1 under the session's row lock.
    -- p_data, p_transcript: the bytes the columns hold; p_needs: JSON text of the seqs the
    -- checkpoint needs ('[]' for none). A replayed checkpoint's data comes back as text.
    -- Returns (status, seq, parent, head, data, metadata, created_at, pinned, pin_note).
    CREATE OR REPLACE FUNCTION ${ns}.append(p_id text, p_data bytea, p_metadata text, p_transcript bytea,
                                 p_check_head boolean, p_expected_head bigint, p_key text, p_now bigint,
                                 p_needs text)
    RETURNS TABLE (status text, seq bigint, parent bigint, head bigint, data text, metadata text, created_at bigint,
                   pinned boolean, pin_note text)
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
              SELECT 'replayed', v_seen, c.parent, NULL::bigint, ${ns}.value_text(b.data), c.metadata, c.created_at,
                     p.seq IS NOT NULL, p.note
                FROM (SELECT 1) AS one
                LEFT JOIN ${ns}.checkpoints c ON c.session_id = p_id AND c.seq = v_seen
                LEFT JOIN ${ns}.bodies b ON b.session_id = p_id AND b.seq = v_seen
                LEFT JOIN ${ns}.pins p ON p.session_id = p_id AND p.seq = v_seen;
            RETURN;
          END IF;
        END IF;

        -- The next seq, under the row lock the UPDATE takes; a concurrent writer makes it wait
        -- and then check its WHERE against the row that writer left.
        UPDATE ${ns}.sessions s
           SET head_parent = s.head, head = s.last_seq + 1, last_seq = s.last_seq + 1,
               checkpoints = s.checkpoints + 1, metadata = p_metadata, updated_at = p_now, head_created_at = p_now
         WHERE s.id = p_id AND (NOT p_check_head OR s.head IS NOT DISTINCT FROM p_expected_head)
        RETURNING s.head, s.head_parent INTO v_seq, v_parent;
        EXIT WHEN FOUND;

        -- Nothing updated: the head is not the expected one, or there is no session (yet).
        SELECT s.head INTO v_parent FROM ${ns}.sessions s WHERE s.id = p_id;
        IF FOUND THEN
          IF p_check_head AND v_parent IS DISTINCT FROM p_expected_head THEN
            RETURN QUERY SELECT 'conflict', NULL::bigint, NULL::bigint, v_parent, NULL::text, NULL::text, NULL::bigint,
                                NULL::boolean, NULL::text;
            RETURN;
          END IF;
          CONTINUE;  -- created or moved since the UPDATE looked: take the next seq again
        END IF;
        IF p_check_head AND p_expected_head IS NOT NULL THEN
          RETURN QUERY SELECT 'conflict', NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::bigint,
                              NULL::boolean, NULL::text;
          RETURN;
        END IF;
        -- A new session; a concurrent creator makes this insert wait, then do nothing, and the
        -- loop goes round again on the row it created.
        INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata, created_at, updated_at, head_created_at)
        VALUES (p_id, 1, NULL, 1, 1, p_metadata, p_now, p_now, p_now) ON CONFLICT (id) DO NOTHING;
        IF FOUND THEN
          v_seq := 1;
          v_parent := NULL;
          EXIT;
        END IF;
      END LOOP;

      IF p_needs <> '[]' THEN
        -- The stored earlier checkpoints among those named. This statement reads after the row
        -- lock above was taken, so a prune that held the lock has committed what it removed.
        INSERT INTO ${ns}.needs (session_id, seq, needed)
        SELECT p_id, v_seq, c.seq FROM ${ns}.checkpoints c
         WHERE c.session_id = p_id AND c.seq < v_seq
           AND c.seq IN (SELECT value::bigint FROM jsonb_array_elements_text(p_needs::jsonb));
      END IF;
      INSERT INTO ${ns}.checkpoints VALUES (p_id, v_seq, v_parent, p_now, p_metadata);
      INSERT INTO ${ns}.bodies VALUES (p_id, v_seq, p_data);
      IF p_transcript <> '[]' THEN
        INSERT INTO ${ns}.transcripts VALUES (p_id, v_seq, p_transcript);
      END IF;
      IF p_key IS NOT NULL THEN
        INSERT INTO ${ns}.idempotency VALUES (p_id, p_key, v_seq);
      END IF;
      RETURN QUERY SELECT 'written', v_seq, v_parent, v_seq, NULL::text, NULL::text, p_now, false, NULL::text;
    END $fn$;


    -- Planned afresh on each call: a cached generic plan of the recursive walk could scan the
    -- whole table at every step.
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
      v_needed bigint;
    BEGIN
      -- FOR SHARE keeps the source from being pruned or deleted while it is copied.
      SELECT s.head INTO v_head FROM ${ns}.sessions s WHERE s.id = p_id FOR SHARE;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_session', NULL::bigint; RETURN; END IF;
      v_at := coalesce(p_at, v_head);
      SELECT c.parent, c.metadata, c.created_at INTO v_parent, v_metadata, v_created
        FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = v_at;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_seq', NULL::bigint; RETURN; END IF;
      INSERT INTO ${ns}.sessions (id, head, head_parent, last_seq, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at, head_created_at)
      VALUES (p_new, v_at, v_parent, v_at, 0, p_id, v_at, v_metadata, p_now, p_now, v_created) ON CONFLICT (id) DO NOTHING;
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
      IF EXISTS (SELECT FROM ${ns}.needs n WHERE n.session_id = p_id) THEN
        -- What the copied checkpoints need comes along, and what that needs in turn.
        WITH RECURSIVE needed (seq) AS (
          SELECT n.needed FROM ${ns}.needs n
            JOIN ${ns}.checkpoints k ON k.session_id = p_new AND k.seq = n.seq
           WHERE n.session_id = p_id
          UNION
          SELECT n.needed FROM needed JOIN ${ns}.needs n ON n.session_id = p_id AND n.seq = needed.seq
        )
        INSERT INTO ${ns}.checkpoints
        SELECT p_new, c.seq, c.parent, c.created_at, c.metadata FROM ${ns}.checkpoints c
         WHERE c.session_id = p_id AND c.seq IN (SELECT x.seq FROM needed x)
           AND NOT EXISTS (SELECT FROM ${ns}.checkpoints d WHERE d.session_id = p_new AND d.seq = c.seq);
        GET DIAGNOSTICS v_needed = ROW_COUNT;
        v_count := v_count + v_needed;
        INSERT INTO ${ns}.needs
        SELECT p_new, n.seq, n.needed FROM ${ns}.needs n
          JOIN ${ns}.checkpoints k ON k.session_id = p_new AND k.seq = n.seq
         WHERE n.session_id = p_id;
      END IF;
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

// Version 6: data and transcript items are text, in and out; these replace the functions
// that take and return them as bytes. Versions before it append through those below.
function versionSix(ns: string): string {
  return `
    DROP FUNCTION ${ns}.append(text, bytea, text, bytea, boolean, bigint, text, bigint, text);
    DROP FUNCTION ${ns}.lineage(text, bigint, bigint, boolean);

    -- append: idempotency, expectedHead, then seq = last + 1 under the session's row lock.
    -- p_needs: JSON text of the seqs the checkpoint needs ('[]' for none).
    -- Returns (status, seq, parent, head, data, metadata, created_at, pinned, pin_note).
    CREATE OR REPLACE FUNCTION ${ns}.append(p_id text, p_data text, p_metadata text, p_transcript text,
                                 p_check_head boolean, p_expected_head bigint, p_key text, p_now bigint,
                                 p_needs text)
    RETURNS TABLE (status text, seq bigint, parent bigint, head bigint, data text, metadata text, created_at bigint,
                   pinned boolean, pin_note text)
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
              SELECT 'replayed', v_seen, c.parent, NULL::bigint, b.data, c.metadata, c.created_at,
                     p.seq IS NOT NULL, p.note
                FROM (SELECT 1) AS one
                LEFT JOIN ${ns}.checkpoints c ON c.session_id = p_id AND c.seq = v_seen
                LEFT JOIN ${ns}.bodies b ON b.session_id = p_id AND b.seq = v_seen
                LEFT JOIN ${ns}.pins p ON p.session_id = p_id AND p.seq = v_seen;
            RETURN;
          END IF;
        END IF;

        -- The next seq, under the row lock the UPDATE takes; a concurrent writer makes it wait
        -- and then check its WHERE against the row that writer left.
        UPDATE ${ns}.sessions s
           SET head_parent = s.head, head = s.last_seq + 1, last_seq = s.last_seq + 1,
               checkpoints = s.checkpoints + 1, metadata = p_metadata, updated_at = p_now, head_created_at = p_now
         WHERE s.id = p_id AND (NOT p_check_head OR s.head IS NOT DISTINCT FROM p_expected_head)
        RETURNING s.head, s.head_parent INTO v_seq, v_parent;
        EXIT WHEN FOUND;

        -- Nothing updated: the head is not the expected one, or there is no session (yet).
        SELECT s.head INTO v_parent FROM ${ns}.sessions s WHERE s.id = p_id;
        IF FOUND THEN
          IF p_check_head AND v_parent IS DISTINCT FROM p_expected_head THEN
            RETURN QUERY SELECT 'conflict', NULL::bigint, NULL::bigint, v_parent, NULL::text, NULL::text, NULL::bigint,
                                NULL::boolean, NULL::text;
            RETURN;
          END IF;
          CONTINUE;  -- created or moved since the UPDATE looked: take the next seq again
        END IF;
        IF p_check_head AND p_expected_head IS NOT NULL THEN
          RETURN QUERY SELECT 'conflict', NULL::bigint, NULL::bigint, NULL::bigint, NULL::text, NULL::text, NULL::bigint,
                              NULL::boolean, NULL::text;
          RETURN;
        END IF;
        -- A new session; a concurrent creator makes this insert wait, then do nothing, and the
        -- loop goes round again on the row it created.
        INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata, created_at, updated_at, head_created_at)
        VALUES (p_id, 1, NULL, 1, 1, p_metadata, p_now, p_now, p_now) ON CONFLICT (id) DO NOTHING;
        IF FOUND THEN
          v_seq := 1;
          v_parent := NULL;
          EXIT;
        END IF;
      END LOOP;

      IF p_needs <> '[]' THEN
        -- The stored earlier checkpoints among those named. This statement reads after the row
        -- lock above was taken, so a prune that held the lock has committed what it removed.
        INSERT INTO ${ns}.needs (session_id, seq, needed)
        SELECT p_id, v_seq, c.seq FROM ${ns}.checkpoints c
         WHERE c.session_id = p_id AND c.seq < v_seq
           AND c.seq IN (SELECT value::bigint FROM jsonb_array_elements_text(p_needs::jsonb));
      END IF;
      INSERT INTO ${ns}.checkpoints VALUES (p_id, v_seq, v_parent, p_now, p_metadata);
      INSERT INTO ${ns}.bodies VALUES (p_id, v_seq, p_data);
      IF p_transcript <> '[]' THEN
        INSERT INTO ${ns}.transcripts VALUES (p_id, v_seq, p_transcript);
      END IF;
      IF p_key IS NOT NULL THEN
        INSERT INTO ${ns}.idempotency VALUES (p_id, p_key, v_seq);
      END IF;
      RETURN QUERY SELECT 'written', v_seq, v_parent, v_seq, NULL::text, NULL::text, p_now, false, NULL::text;
    END $fn$;

    -- A walk up the parents, one primary-key lookup a step: its cost follows the steps taken,
    -- not the size of the session, whatever plan is cached. PL/pgSQL keeps its plans for the
    -- life of a server connection.
    CREATE OR REPLACE FUNCTION ${ns}.lineage(p_id text, p_from bigint, p_limit bigint, p_transcript boolean)
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
  `;
}

// Versions 1 and 2: append locks the session row, then updates it.
function versionOne(ns: string): string {
  return `
    CREATE OR REPLACE FUNCTION ${ns}.append(p_id text, p_data text, p_metadata text, p_transcript text,
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

    CREATE OR REPLACE FUNCTION ${ns}.rollback(p_id text, p_seq bigint, p_check_head boolean, p_expected_head bigint, p_now bigint)
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

    CREATE OR REPLACE FUNCTION ${ns}.fork(p_id text, p_at bigint, p_new text, p_now bigint)
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
  `;
}

// Version 3: the session row keeps the head's parent, but not yet its creation time.
function versionThree(ns: string): string {
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
               checkpoints = s.checkpoints + 1, metadata = p_metadata, updated_at = p_now
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
        INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata, created_at, updated_at)
        VALUES (p_id, 1, NULL, 1, 1, p_metadata, p_now, p_now) ON CONFLICT (id) DO NOTHING;
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
      UPDATE ${ns}.sessions s SET head = p_seq, head_parent = v_parent, metadata = v_metadata, updated_at = p_now
       WHERE s.id = p_id;
      RETURN QUERY SELECT 'done', p_seq;
    END $fn$;

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
      INSERT INTO ${ns}.sessions (id, head, head_parent, last_seq, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at)
      VALUES (p_new, v_at, v_parent, v_at, 0, p_id, v_at, v_metadata, p_now, p_now) ON CONFLICT (id) DO NOTHING;
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

// Version 4: the session row keeps the head's creation time too; no checkpoint needs another.
function versionFour(ns: string): string {
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
               checkpoints = s.checkpoints + 1, metadata = p_metadata, updated_at = p_now, head_created_at = p_now
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
        INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata, created_at, updated_at, head_created_at)
        VALUES (p_id, 1, NULL, 1, 1, p_metadata, p_now, p_now, p_now) ON CONFLICT (id) DO NOTHING;
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
      INSERT INTO ${ns}.sessions (id, head, head_parent, last_seq, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at, head_created_at)
      VALUES (p_new, v_at, v_parent, v_at, 0, p_id, v_at, v_metadata, p_now, p_now, v_created) ON CONFLICT (id) DO NOTHING;
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
