/**
 * The functions the PostgreSQL backend calls, as this version defines them. Each mutation but
 * an import and setTags (statements of their own, in the backend) is one function, so that it
 * costs one round trip and holds no session state between statements (it works through a pool and
 * through PgBouncer in transaction mode). They are created anew
 * (CREATE OR REPLACE) after the steps of any upgrade, so each is written once, here; a change
 * to one comes with a new schema version, whose upgrade installs it.
 */
import { schemaIdentifier } from './schema.js';

/** Every function of schema `namespace`, as one script. */
export function functions(namespace: string): string {
  const ns = schemaIdentifier(namespace);
  return `
    -- Earlier versions read through load(); no statement calls it now.
    DROP FUNCTION IF EXISTS ${ns}.load(text, bigint);
    -- Versions before 5 appended without needs.
    DROP FUNCTION IF EXISTS ${ns}.append(text, text, text, text, boolean, bigint, text, bigint);
    -- Versions before 6 returned no pin with a replayed checkpoint, and pruned by keepLast alone;
    -- versions before 7 took data and transcript items as text, and lineage returned them so: a
    -- function's result type and arguments are part of what CREATE OR REPLACE cannot change.
    DROP FUNCTION IF EXISTS ${ns}.append(text, text, text, text, boolean, bigint, text, bigint, text);
    DROP FUNCTION IF EXISTS ${ns}.prune(text, bigint);
    DROP FUNCTION IF EXISTS ${ns}.lineage(text, bigint, bigint, boolean);
    -- Versions before 9 appended without tags. The two arguments that took them come last, with
    -- defaults, so that a process of version 8 still running after the upgrade appends on.
    DROP FUNCTION IF EXISTS ${ns}.append(text, bytea, text, bytea, boolean, bigint, text, bigint, text);

    -- value_text: the text of a value column's bytes, exactly as textFromStoredBytes (@ckpt/core)
    -- makes it, so that reads send the text core was handed rather than bytea, which travels as
    -- hex at twice its size. Bytes marked ckpt1b; with their two header fields give the encoded
    -- form, the header read as latin1 and the rest as base64 without the line breaks encode()
    -- puts in; any other bytes are UTF-8 text. Bytes that are neither (ckpt never writes them)
    -- fail the read with SQLSTATE 22021. One expression, no FROM, STABLE as convert_from is: the
    -- planner inlines it into each statement that reads through it, instead of calling it per row.
    -- replace(), not translate(), drops the line breaks: translate() walks the text a character
    -- at a time, many times slower on a long payload.
    -- s1 = position(';' IN substr(v, 8)) ends the steps; the owner ends s2 after it.
    CREATE OR REPLACE FUNCTION ${ns}.value_text(v bytea) RETURNS text
    LANGUAGE sql STABLE PARALLEL SAFE AS $fn$
      SELECT CASE
        WHEN substr(v, 1, 7) = '\\x636b707431623b'::bytea  -- 'ckpt1b;'
         AND position('\\x3b'::bytea IN substr(v, 8)) > 0
         AND position('\\x3b'::bytea IN substr(v, 8 + position('\\x3b'::bytea IN substr(v, 8)))) > 0
        THEN 'ckpt1;'
             || convert_from(substr(v, 8, position('\\x3b'::bytea IN substr(v, 8))
                                          + position('\\x3b'::bytea IN substr(v, 8 + position('\\x3b'::bytea IN substr(v, 8))))),
                             'LATIN1')
             || replace(encode(substr(v, 8 + position('\\x3b'::bytea IN substr(v, 8))
                                            + position('\\x3b'::bytea IN substr(v, 8 + position('\\x3b'::bytea IN substr(v, 8))))),
                               'base64'), E'\\n', '')
        ELSE convert_from(v, 'UTF8')
      END
    $fn$;

    -- append: idempotency, expectedHead, then seq = last + 1 under the session's row lock.
    -- p_data, p_transcript: the bytes the columns hold; p_needs: JSON text of the seqs the
    -- checkpoint needs ('[]' for none); with p_set_tags, the session's tags become p_tags (JSON
    -- text, null: none) with the checkpoint, and the triggers of the session row index them.
    -- A replayed checkpoint's data comes back as text.
    -- Returns (status, seq, parent, head, data, metadata, created_at, pinned, pin_note).
    CREATE OR REPLACE FUNCTION ${ns}.append(p_id text, p_data bytea, p_metadata text, p_transcript bytea,
                                 p_check_head boolean, p_expected_head bigint, p_key text, p_now bigint,
                                 p_needs text, p_set_tags boolean DEFAULT false, p_tags text DEFAULT NULL)
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
               checkpoints = s.checkpoints + 1, metadata = p_metadata, updated_at = p_now, head_created_at = p_now,
               tags = CASE WHEN p_set_tags THEN p_tags ELSE s.tags END
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
        INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata, created_at, updated_at, head_created_at,
                                         tags)
        VALUES (p_id, 1, NULL, 1, 1, p_metadata, p_now, p_now, p_now, CASE WHEN p_set_tags THEN p_tags END)
        ON CONFLICT (id) DO NOTHING;
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
      UPDATE ${ns}.sessions s SET head = p_seq, head_parent = v_parent, metadata = v_metadata, updated_at = p_now, head_created_at = v_created
       WHERE s.id = p_id;
      RETURN QUERY SELECT 'done', p_seq;
    END $fn$;

    -- Planned afresh on each call: a cached generic plan of the recursive walk could scan the
    -- whole table at every step.
    CREATE OR REPLACE FUNCTION ${ns}.fork(p_id text, p_at bigint, p_new text, p_now bigint)
    RETURNS TABLE (status text, seq bigint)
    LANGUAGE plpgsql SET plan_cache_mode = force_custom_plan AS $fn$
    DECLARE
      v_head bigint;
      v_tags text;
      v_at bigint;
      v_parent bigint;
      v_metadata text;
      v_created bigint;
      v_count bigint;
      v_needed bigint;
    BEGIN
      -- FOR SHARE keeps the source from being pruned, deleted or retagged while it is copied.
      SELECT s.head, s.tags INTO v_head, v_tags FROM ${ns}.sessions s WHERE s.id = p_id FOR SHARE;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_session', NULL::bigint; RETURN; END IF;
      v_at := coalesce(p_at, v_head);
      SELECT c.parent, c.metadata, c.created_at INTO v_parent, v_metadata, v_created
        FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = v_at;
      IF NOT FOUND THEN RETURN QUERY SELECT 'no_seq', NULL::bigint; RETURN; END IF;
      -- With the source's tags, which the insert's trigger indexes.
      INSERT INTO ${ns}.sessions (id, head, head_parent, last_seq, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at, head_created_at, tags)
      VALUES (p_new, v_at, v_parent, v_at, 0, p_id, v_at, v_metadata, p_now, p_now, v_created, v_tags) ON CONFLICT (id) DO NOTHING;
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

    -- prune: what the rule lets go (below the p_keep-th highest seq, created before p_before;
    -- null: no bound), but the head, the pinned, and what a kept checkpoint needs, directly or
    -- through one another. With p_dry, only counts.
    CREATE OR REPLACE FUNCTION ${ns}.prune(p_id text, p_keep bigint, p_before bigint, p_dry boolean)
    RETURNS bigint
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_head bigint;
      v_below bigint := 9223372036854775807;
      v_before bigint := coalesce(p_before, 9223372036854775807);
      v_needs boolean;
      v_kept bigint[] := '{}';
      v_gone bigint[];
    BEGIN
      SELECT s.head INTO v_head FROM ${ns}.sessions s WHERE s.id = p_id FOR UPDATE;
      IF NOT FOUND THEN RETURN 0; END IF;
      IF p_keep IS NOT NULL THEN
        SELECT c.seq INTO v_below FROM ${ns}.checkpoints c WHERE c.session_id = p_id
         ORDER BY c.seq DESC OFFSET p_keep - 1 LIMIT 1;
        IF NOT FOUND THEN RETURN 0; END IF;
      END IF;
      v_needs := EXISTS (SELECT FROM ${ns}.needs n WHERE n.session_id = p_id);
      IF v_needs THEN
        -- Kept for their own sake: what the rule keeps, the head and the pinned; kept besides:
        -- what those need.
        WITH RECURSIVE kept (seq) AS (
          SELECT c.seq FROM ${ns}.checkpoints c
           WHERE c.session_id = p_id AND (c.seq >= v_below OR c.created_at >= v_before)
          UNION
          SELECT v_head
          UNION
          SELECT p.seq FROM ${ns}.pins p WHERE p.session_id = p_id
          UNION
          SELECT n.needed FROM kept JOIN ${ns}.needs n ON n.session_id = p_id AND n.seq = kept.seq
        )
        SELECT coalesce(array_agg(seq), '{}') INTO v_kept FROM kept;
      END IF;
      SELECT coalesce(array_agg(c.seq), '{}') INTO v_gone FROM ${ns}.checkpoints c
       WHERE c.session_id = p_id AND c.seq < v_below AND c.created_at < v_before AND c.seq <> v_head
         AND c.seq <> ALL (v_kept)
         AND NOT EXISTS (SELECT FROM ${ns}.pins p WHERE p.session_id = p_id AND p.seq = c.seq);
      IF p_dry OR cardinality(v_gone) = 0 THEN RETURN cardinality(v_gone); END IF;
      DELETE FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = ANY (v_gone);
      DELETE FROM ${ns}.bodies b WHERE b.session_id = p_id AND b.seq = ANY (v_gone);
      DELETE FROM ${ns}.transcripts x WHERE x.session_id = p_id AND x.seq = ANY (v_gone);
      IF v_needs THEN
        DELETE FROM ${ns}.needs n WHERE n.session_id = p_id AND n.seq = ANY (v_gone);
      END IF;
      UPDATE ${ns}.sessions s SET checkpoints = s.checkpoints - cardinality(v_gone) WHERE s.id = p_id;
      RETURN cardinality(v_gone);
    END $fn$;

    -- pin and unpin hold the session row, as prune and the sweeps do, so that none of them
    -- decides on pins another is changing; the row counts the session's pins.
    CREATE OR REPLACE FUNCTION ${ns}.pin(p_id text, p_seq bigint, p_note text)
    RETURNS text
    LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM FROM ${ns}.sessions s WHERE s.id = p_id FOR UPDATE;
      IF NOT FOUND THEN RETURN 'no_session'; END IF;
      PERFORM FROM ${ns}.checkpoints c WHERE c.session_id = p_id AND c.seq = p_seq;
      IF NOT FOUND THEN RETURN 'no_seq'; END IF;
      UPDATE ${ns}.pins p SET note = p_note WHERE p.session_id = p_id AND p.seq = p_seq;
      IF NOT FOUND THEN
        INSERT INTO ${ns}.pins (session_id, seq, note) VALUES (p_id, p_seq, p_note);
        UPDATE ${ns}.sessions s SET pinned = s.pinned + 1 WHERE s.id = p_id;
      END IF;
      RETURN 'done';
    END $fn$;

    CREATE OR REPLACE FUNCTION ${ns}.unpin(p_id text, p_seq bigint)
    RETURNS boolean
    LANGUAGE plpgsql AS $fn$
    BEGIN
      PERFORM FROM ${ns}.sessions s WHERE s.id = p_id FOR UPDATE;
      IF NOT FOUND THEN RETURN false; END IF;
      DELETE FROM ${ns}.pins p WHERE p.session_id = p_id AND p.seq = p_seq;
      IF NOT FOUND THEN RETURN false; END IF;
      UPDATE ${ns}.sessions s SET pinned = s.pinned - 1 WHERE s.id = p_id;
      RETURN true;
    END $fn$;

    -- delete_idle: the session's checkpoint count when it was (or, with p_dry, would be)
    -- deleted: written before p_before and holding no pin, as the locked row says; else null.
    CREATE OR REPLACE FUNCTION ${ns}.delete_idle(p_id text, p_before bigint, p_dry boolean)
    RETURNS bigint
    LANGUAGE plpgsql AS $fn$
    DECLARE
      v_count bigint;
    BEGIN
      IF p_dry THEN
        SELECT s.checkpoints INTO v_count FROM ${ns}.sessions s
         WHERE s.id = p_id AND s.updated_at < p_before AND s.pinned = 0;
        RETURN v_count;
      END IF;
      SELECT s.checkpoints INTO v_count FROM ${ns}.sessions s
       WHERE s.id = p_id AND s.updated_at < p_before AND s.pinned = 0 FOR UPDATE;
      IF NOT FOUND THEN RETURN NULL; END IF;
      PERFORM ${ns}.delete_session(p_id);
      RETURN v_count;
    END $fn$;

    -- A walk up the parents, one primary-key lookup a step: its cost follows the steps taken,
    -- not the size of the session, whatever plan is cached. PL/pgSQL keeps its plans for the
    -- life of a server connection.
    CREATE OR REPLACE FUNCTION ${ns}.lineage(p_id text, p_from bigint, p_limit bigint, p_transcript boolean)
    RETURNS TABLE (seq bigint, parent bigint, created_at bigint, transcript bytea)
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

    CREATE OR REPLACE FUNCTION ${ns}.delete_session(p_id text)
    RETURNS boolean
    LANGUAGE plpgsql AS $fn$
    BEGIN
      DELETE FROM ${ns}.sessions s WHERE s.id = p_id;
      IF NOT FOUND THEN RETURN false; END IF;
      DELETE FROM ${ns}.checkpoints c WHERE c.session_id = p_id;
      DELETE FROM ${ns}.bodies b WHERE b.session_id = p_id;
      DELETE FROM ${ns}.transcripts x WHERE x.session_id = p_id;
      DELETE FROM ${ns}.idempotency i WHERE i.session_id = p_id;
      DELETE FROM ${ns}.needs n WHERE n.session_id = p_id;
      DELETE FROM ${ns}.pins p WHERE p.session_id = p_id;
      RETURN true;
    END $fn$;
  `;
}
