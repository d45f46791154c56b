/**
 * The stored procedures the MySQL backend calls, as this version defines them: each mutation
 * but an import (its own statements in one transaction, in the backend) is one procedure, so
 * it costs one round trip, and each reads committed data without gap locks and undoes itself
 * on any error. They are created anew after the steps of any upgrade
 * (MySQL has no CREATE OR REPLACE PROCEDURE: each is dropped, then created), so each is
 * written once, here; a change to one comes with a new schema version, whose upgrade installs
 * it.
 */
import { BYTES, ID, TEXT, tables } from './schema.js';

const BEGIN = `
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;`;

/** The ids in `json` (a JSON array of them in hex), as a derived table of one column, `id`. */
const idsOf = (json: string) => `JSON_TABLE(${json}, '$[*]' COLUMNS (id VARCHAR(2040) PATH '$'))`;

/** The seqs in `json` (a JSON array of them), as a derived table of one column, `seq`. */
const seqsOf = (json: string) => `JSON_TABLE(${json}, '$[*]' COLUMNS (seq BIGINT PATH '$'))`;

/**
 * The steps of one append, between a transaction's (or savepoint's) start and its end: take the
 * next seq, refuse a replayed key or a stale head, write the checkpoint, and select the outcome
 * row. `undo` ends a refused call without its writes, `leave` goes on past it, `keep` ends a
 * written one. The values are p_id, p_data, p_metadata, p_transcript, p_check, p_expected,
 * p_key, p_now, p_needs, p_set_tags and p_tags; v_seq, v_parent and v_seen (NULL at the start)
 * are the caller's.
 */
function appendSteps(
  t: ReturnType<typeof tables>,
  end: { undo: string; leave: string; keep: string },
): string {
  return `
         -- The first statement takes the session row's exclusive lock whether or not the session
         -- exists, so no locking read ever touches a missing row; it also takes the next seq and
         -- moves the head. A call that must not write (its idempotency key was seen, or the head
         -- is not the expected one) is then undone, which leaves the row as it was.
         -- Each value is set from the row as it was: the same under MariaDB's
         -- SIMULTANEOUS_ASSIGNMENT as under the usual left-to-right assignment. The tags too
         -- (the schema's triggers index them): a call undone takes them back with the row.
         INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_parent, head_created_at,
                                    metadata, created_at, updated_at, tags)
         VALUES (p_id, 1, 1, 1, NULL, p_now, p_metadata, p_now, p_now, IF(p_set_tags, p_tags, NULL))
         ON DUPLICATE KEY UPDATE head_parent = head, head = last_seq + 1, last_seq = last_seq + 1,
                                 checkpoints = checkpoints + 1, head_created_at = p_now,
                                 metadata = p_metadata, updated_at = p_now,
                                 tags = IF(p_set_tags, p_tags, tags);
         -- A transaction reads its own writes: the seq just taken and the head it replaced.
         SELECT head, head_parent INTO v_seq, v_parent FROM ${t.sessions} WHERE id = p_id;
         IF p_key IS NOT NULL AND v_seq > 1 THEN
           SELECT seq INTO v_seen FROM ${t.idempotency} WHERE session_id = p_id AND k = p_key;
         END IF;
         IF v_seen IS NOT NULL THEN
           ${end.undo};
           SELECT 'replayed' AS status, v_seen AS seq, c.parent, NULL AS head, b.data, c.metadata, c.created_at,
                  p.seq IS NOT NULL AS pinned, p.note AS pin_note
             FROM (SELECT 1 AS one) AS one
             LEFT JOIN ${t.checkpoints} c ON c.session_id = p_id AND c.seq = v_seen
             LEFT JOIN ${t.bodies} b ON b.session_id = p_id AND b.seq = v_seen
             LEFT JOIN ${t.pins} p ON p.session_id = p_id AND p.seq = v_seen;
           ${end.leave};
         END IF;
         IF p_check AND NOT (v_parent <=> p_expected) THEN
           ${end.undo};
           SELECT 'conflict' AS status, NULL AS seq, NULL AS parent, v_parent AS head;
           ${end.leave};
         END IF;
         IF p_needs <> '[]' THEN
           -- The stored earlier checkpoints among those named; read committed after the row
           -- lock above, so a prune that held it has committed what it removed.
           INSERT INTO ${t.needs} (session_id, seq, needed)
           SELECT p_id, v_seq, c.seq FROM ${t.checkpoints} c
            WHERE c.session_id = p_id AND c.seq < v_seq
              AND c.seq IN (SELECT j.seq FROM ${seqsOf('p_needs')} AS j);
         END IF;
         INSERT INTO ${t.checkpoints} VALUES (p_id, v_seq, v_parent, p_now, p_metadata);
         INSERT INTO ${t.bodies} VALUES (p_id, v_seq, p_data);
         IF p_transcript <> '[]' THEN
           INSERT INTO ${t.transcripts} VALUES (p_id, v_seq, p_transcript);
         END IF;
         IF p_key IS NOT NULL THEN
           INSERT INTO ${t.idempotency} VALUES (p_id, p_key, v_seq);
         END IF;
         ${end.keep};
         SELECT 'written' AS status, v_seq AS seq, v_parent AS parent;`;
}

/**
 * The tables of the rows a session owns beside its own row. Its tags' rows are not among them:
 * the schema's triggers remove them with the session's row.
 */
const owned = (t: ReturnType<typeof tables>) =>
  [t.checkpoints, t.bodies, t.transcripts, t.idempotency, t.needs, t.pins] as const;

/**
 * The statements that remove every row session `id` owns but its own, which the caller has
 * locked or removed first: every writer takes a session's row before its other rows.
 */
function removeOwnedRows(t: ReturnType<typeof tables>, id: string): string {
  return owned(t)
    .map((table) => `DELETE FROM ${table} WHERE session_id = ${id};`)
    .join('\n         ');
}

/** The statements that drop and create every procedure of namespace `ns`. */
export function procedures(ns: string): string[] {
  const t = tables(ns);
  const created = {
    // The first statement takes the session row's exclusive lock whether or not the session
    // exists, so no locking read ever touches a missing row; it also takes the next seq and
    // moves the head. A call that must not write (its idempotency key was seen, or the head
    // is not the expected one) then rolls back, which leaves the row as it was. With the
    // session's tags (p_set_tags: replace them with p_tags, null for none).
    append_tagged: `CREATE PROCEDURE ${ns}_append_tagged(IN p_id ${ID}, IN p_data ${BYTES},
         IN p_metadata LONGTEXT, IN p_transcript ${BYTES}, IN p_check BOOLEAN, IN p_expected BIGINT,
         IN p_key ${ID}, IN p_now BIGINT, IN p_needs LONGTEXT, IN p_set_tags BOOLEAN, IN p_tags ${TEXT})
       proc: BEGIN
         DECLARE v_seq BIGINT;
         DECLARE v_parent BIGINT;
         DECLARE v_seen BIGINT DEFAULT NULL;
         ${BEGIN}
         ${appendSteps(t, { undo: 'ROLLBACK', leave: 'LEAVE proc', keep: 'COMMIT' })}
       END`,
    // The append of versions 6 to 10, which their processes call (nine arguments) until they
    // are upgraded: append_tagged, leaving the tags as they are.
    append: `CREATE PROCEDURE ${ns}_append(IN p_id ${ID}, IN p_data ${BYTES}, IN p_metadata LONGTEXT,
         IN p_transcript ${BYTES}, IN p_check BOOLEAN, IN p_expected BIGINT, IN p_key ${ID}, IN p_now BIGINT,
         IN p_needs LONGTEXT)
       CALL ${ns}_append_tagged(p_id, p_data, p_metadata, p_transcript, p_check, p_expected, p_key,
                                p_now, p_needs, FALSE, NULL)`,
    // The checkpoints that waited for a connection, in one transaction: each call as append's
    // steps in a savepoint of its own, which a refusal or an error undoes alone. `p_calls`
    // is a JSON array of append's values, one array a call, already in the order of the
    // session ids (so that two batches lock sessions in the same order). One result set a call.
    // JSON carries text only: each call's data and transcript items are bytes of `p_values`,
    // one after the other, call after call, and the call's array has their lengths instead.
    // A call's tags are JSON text inside it (a string, or null for none).
    append_batch: `CREATE PROCEDURE ${ns}_append_batch(IN p_calls LONGTEXT, IN p_values ${BYTES})
       proc: BEGIN
         DECLARE p_id ${ID};
         DECLARE p_data, p_transcript ${BYTES};
         DECLARE p_metadata, p_needs LONGTEXT;
         DECLARE p_tags ${TEXT};
         DECLARE v_data_bytes, v_transcript_bytes BIGINT;
         DECLARE v_at BIGINT DEFAULT 1;
         DECLARE p_check, p_set_tags BOOLEAN;
         DECLARE p_expected, p_now BIGINT;
         DECLARE p_key ${ID};
         DECLARE v_seq, v_parent, v_seen BIGINT;
         DECLARE v_left INT DEFAULT JSON_LENGTH(p_calls);
         DECLARE v_errno INT;
         DECLARE v_message TEXT;
         DECLARE calls CURSOR FOR SELECT * FROM JSON_TABLE(p_calls, '$[*]' COLUMNS (
           id ${ID} PATH '$[0]', data_bytes BIGINT PATH '$[1]', metadata ${TEXT} PATH '$[2]',
           transcript_bytes BIGINT PATH '$[3]', do_check BOOLEAN PATH '$[4]', expected BIGINT PATH '$[5]',
           k ${ID} PATH '$[6]', now BIGINT PATH '$[7]', needs ${TEXT} PATH '$[8]',
           set_tags BOOLEAN PATH '$[9]', tags ${TEXT} PATH '$[10]')) AS j;
         ${BEGIN}
         OPEN calls;
         each_call: WHILE v_left > 0 DO
           SET v_left = v_left - 1;
           FETCH calls INTO p_id, v_data_bytes, p_metadata, v_transcript_bytes, p_check, p_expected,
                            p_key, p_now, p_needs, p_set_tags, p_tags;
           SET p_data = SUBSTRING(p_values, v_at, v_data_bytes);
           SET p_transcript = SUBSTRING(p_values, v_at + v_data_bytes, v_transcript_bytes);
           SET v_at = v_at + v_data_bytes + v_transcript_bytes;
           SET v_seen = NULL;
           SAVEPOINT one_call;
           one: BEGIN
             DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN
               GET DIAGNOSTICS CONDITION 1 v_errno = MYSQL_ERRNO, v_message = MESSAGE_TEXT;
               -- A deadlock rolled back the whole transaction, savepoints and all: the batch fails
               -- as one (and runs again, as any call the server rolled back).
               IF v_errno = 1213 THEN RESIGNAL; END IF;
               ROLLBACK TO SAVEPOINT one_call;
               SELECT 'error' AS status, NULL AS seq, NULL AS parent, NULL AS head,
                      v_errno AS error_code, v_message AS error_message;
             END;
             ${appendSteps(t, { undo: 'ROLLBACK TO SAVEPOINT one_call', leave: 'ITERATE each_call', keep: 'RELEASE SAVEPOINT one_call' })}
           END one;
         END WHILE;
         CLOSE calls;
         COMMIT;
       END`,
    rollback: `CREATE PROCEDURE ${ns}_rollback(IN p_id ${ID}, IN p_seq BIGINT, IN p_check BOOLEAN, IN p_expected BIGINT, IN p_now BIGINT)
       proc: BEGIN
         DECLARE v_head BIGINT DEFAULT NULL;
         DECLARE v_metadata LONGTEXT DEFAULT NULL;
         ${BEGIN}
         SELECT head INTO v_head FROM ${t.sessions} WHERE id = p_id FOR UPDATE;
         IF v_head IS NULL THEN ROLLBACK; SELECT 'no_session' AS status, NULL AS head; LEAVE proc; END IF;
         IF p_check AND NOT (v_head <=> p_expected) THEN
           ROLLBACK; SELECT 'conflict' AS status, v_head AS head; LEAVE proc;
         END IF;
         SELECT metadata INTO v_metadata FROM ${t.checkpoints} WHERE session_id = p_id AND seq = p_seq;
         IF v_metadata IS NULL THEN ROLLBACK; SELECT 'no_seq' AS status, v_head AS head; LEAVE proc; END IF;
         UPDATE ${t.sessions} SET head = p_seq, metadata = v_metadata, updated_at = p_now WHERE id = p_id;
         UPDATE ${t.sessions} s JOIN ${t.checkpoints} c ON c.session_id = s.id AND c.seq = s.head
            SET s.head_parent = c.parent, s.head_created_at = c.created_at WHERE s.head > 0 AND s.id = p_id;
         COMMIT;
         SELECT 'done' AS status, p_seq AS head;
       END`,
    // fork copies the chain one checkpoint at a time, walking up the parents, then what the
    // copied checkpoints need a round at a time: without recursive queries, whose depth both
    // servers bound (MariaDB silently).
    fork: `CREATE PROCEDURE ${ns}_fork(IN p_id ${ID}, IN p_at BIGINT, IN p_new ${ID}, IN p_now BIGINT)
       proc: BEGIN
         DECLARE v_head BIGINT DEFAULT NULL;
         DECLARE v_metadata LONGTEXT DEFAULT NULL;
         DECLARE v_seq BIGINT;
         DECLARE v_parent BIGINT;
         DECLARE v_count BIGINT DEFAULT 0;
         DECLARE v_more LONGTEXT;
         DECLARE v_copied BIGINT;
         DECLARE v_tags ${TEXT} DEFAULT NULL;
         ${BEGIN}
         SELECT head, tags INTO v_head, v_tags FROM ${t.sessions} WHERE id = p_id LOCK IN SHARE MODE;
         IF v_head IS NULL THEN ROLLBACK; SELECT 'no_session' AS status, NULL AS seq; LEAVE proc; END IF;
         SET v_seq = COALESCE(p_at, v_head);
         SELECT metadata INTO v_metadata FROM ${t.checkpoints} WHERE session_id = p_id AND seq = v_seq;
         IF v_metadata IS NULL THEN ROLLBACK; SELECT 'no_seq' AS status, NULL AS seq; LEAVE proc; END IF;
         -- With the source's tags, which the schema's triggers index.
         INSERT IGNORE INTO ${t.sessions} (id, head, last_seq, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at, tags)
         VALUES (p_new, v_seq, v_seq, 0, p_id, v_seq, v_metadata, p_now, p_now, v_tags);
         IF ROW_COUNT() = 0 THEN ROLLBACK; SELECT 'exists' AS status, NULL AS seq; LEAVE proc; END IF;
         SET v_parent = v_seq;
         WHILE v_parent IS NOT NULL DO
           SET v_seq = v_parent;
           SET v_parent = NULL;
           INSERT INTO ${t.checkpoints} SELECT p_new, seq, parent, created_at, metadata
             FROM ${t.checkpoints} WHERE session_id = p_id AND seq = v_seq;
           IF ROW_COUNT() > 0 THEN
             SET v_count = v_count + 1;
             INSERT INTO ${t.bodies} SELECT p_new, seq, data FROM ${t.bodies} WHERE session_id = p_id AND seq = v_seq;
             INSERT INTO ${t.transcripts} SELECT p_new, seq, items FROM ${t.transcripts} WHERE session_id = p_id AND seq = v_seq;
             SELECT parent INTO v_parent FROM ${t.checkpoints} WHERE session_id = p_id AND seq = v_seq;
           END IF;
         END WHILE;
         IF EXISTS (SELECT 1 FROM ${t.needs} WHERE session_id = p_id) THEN
           needed: LOOP
             -- What the checkpoints copied so far need and the copy lacks.
             SELECT CAST(JSON_ARRAYAGG(m.needed) AS CHAR) INTO v_more FROM (
               SELECT DISTINCT n.needed FROM ${t.needs} n
                 JOIN ${t.checkpoints} k ON k.session_id = p_new AND k.seq = n.seq
                WHERE n.session_id = p_id
                  AND NOT EXISTS (SELECT 1 FROM ${t.checkpoints} d WHERE d.session_id = p_new AND d.seq = n.needed)
             ) AS m;
             IF v_more IS NULL THEN LEAVE needed; END IF;
             INSERT INTO ${t.checkpoints} SELECT p_new, seq, parent, created_at, metadata
               FROM ${t.checkpoints} WHERE session_id = p_id AND seq IN (SELECT j.seq FROM ${seqsOf('v_more')} AS j);
             SET v_copied = ROW_COUNT();
             IF v_copied = 0 THEN LEAVE needed; END IF;
             SET v_count = v_count + v_copied;
             INSERT INTO ${t.bodies} SELECT p_new, seq, data
               FROM ${t.bodies} WHERE session_id = p_id AND seq IN (SELECT j.seq FROM ${seqsOf('v_more')} AS j);
             INSERT INTO ${t.transcripts} SELECT p_new, seq, items
               FROM ${t.transcripts} WHERE session_id = p_id AND seq IN (SELECT j.seq FROM ${seqsOf('v_more')} AS j);
           END LOOP needed;
           INSERT INTO ${t.needs} SELECT p_new, n.seq, n.needed FROM ${t.needs} n
             JOIN ${t.checkpoints} k ON k.session_id = p_new AND k.seq = n.seq
            WHERE n.session_id = p_id;
         END IF;
         UPDATE ${t.sessions} SET checkpoints = v_count WHERE id = p_new;
         UPDATE ${t.sessions} s JOIN ${t.checkpoints} c ON c.session_id = s.id AND c.seq = s.head
            SET s.head_parent = c.parent, s.head_created_at = c.created_at WHERE s.head > 0 AND s.id = p_new;
         COMMIT;
         SELECT 'done' AS status, COALESCE(p_at, v_head) AS seq;
       END`,
    // prune removes what the rule lets go (below the p_keep-th highest seq, created before
    // p_before; null: no bound), but the head, the pinned, and what the kept checkpoints need:
    // found a round at a time (v_next: the seqs found in the last round; v_kept: all found so
    // far), without recursive queries, whose depth both servers bound. With p_dry, only counts.
    prune: `CREATE PROCEDURE ${ns}_prune(IN p_id ${ID}, IN p_keep BIGINT, IN p_before BIGINT, IN p_dry BOOLEAN)
       proc: BEGIN
         DECLARE v_head BIGINT DEFAULT NULL;
         DECLARE v_below BIGINT DEFAULT NULL;
         DECLARE v_before BIGINT DEFAULT COALESCE(p_before, 9223372036854775807);
         DECLARE v_skip BIGINT DEFAULT COALESCE(p_keep, 1) - 1;
         DECLARE v_removed BIGINT DEFAULT 0;
         DECLARE v_needs BOOLEAN DEFAULT FALSE;
         DECLARE v_kept LONGTEXT DEFAULT '[]';
         DECLARE v_next LONGTEXT;
         DECLARE v_gone LONGTEXT;
         ${BEGIN}
         SELECT head INTO v_head FROM ${t.sessions} WHERE id = p_id FOR UPDATE;
         IF v_head IS NOT NULL AND p_keep IS NULL THEN
           SET v_below = 9223372036854775807;
         ELSEIF v_head IS NOT NULL THEN
           SELECT seq INTO v_below FROM ${t.checkpoints} WHERE session_id = p_id ORDER BY seq DESC LIMIT v_skip, 1;
         END IF;
         IF v_below IS NOT NULL THEN
           SET v_needs = EXISTS (SELECT 1 FROM ${t.needs} WHERE session_id = p_id);
           IF v_needs THEN
             -- What the rule keeps, the head and the pinned need, then what that needs, and so on.
             SELECT CAST(JSON_ARRAYAGG(m.needed) AS CHAR) INTO v_next FROM (
               SELECT DISTINCT n.needed FROM ${t.needs} n
                 JOIN ${t.checkpoints} c ON c.session_id = n.session_id AND c.seq = n.seq
                WHERE n.session_id = p_id
                  AND (n.seq >= v_below OR c.created_at >= v_before OR n.seq = v_head
                       OR EXISTS (SELECT 1 FROM ${t.pins} p WHERE p.session_id = p_id AND p.seq = n.seq))
             ) AS m;
             WHILE v_next IS NOT NULL DO
               SET v_kept = JSON_MERGE_PRESERVE(v_kept, v_next);
               SELECT CAST(JSON_ARRAYAGG(m.needed) AS CHAR) INTO v_next FROM (
                 SELECT DISTINCT n.needed FROM ${t.needs} n
                  WHERE n.session_id = p_id
                    AND n.seq IN (SELECT j.seq FROM ${seqsOf('v_next')} AS j)
                    AND n.needed NOT IN (SELECT k.seq FROM ${seqsOf('v_kept')} AS k)
               ) AS m;
             END WHILE;
           END IF;
           SELECT CAST(JSON_ARRAYAGG(seq) AS CHAR), COUNT(*) INTO v_gone, v_removed FROM ${t.checkpoints}
            WHERE session_id = p_id AND seq < v_below AND created_at < v_before AND seq <> v_head
              AND seq NOT IN (SELECT k.seq FROM ${seqsOf('v_kept')} AS k)
              AND seq NOT IN (SELECT p.seq FROM ${t.pins} p WHERE p.session_id = p_id);
           IF v_removed > 0 AND NOT p_dry THEN
             DELETE FROM ${t.checkpoints} WHERE session_id = p_id AND seq IN (SELECT j.seq FROM ${seqsOf('v_gone')} AS j);
             DELETE FROM ${t.bodies} WHERE session_id = p_id AND seq IN (SELECT j.seq FROM ${seqsOf('v_gone')} AS j);
             DELETE FROM ${t.transcripts} WHERE session_id = p_id AND seq IN (SELECT j.seq FROM ${seqsOf('v_gone')} AS j);
             IF v_needs THEN
               DELETE FROM ${t.needs} WHERE session_id = p_id AND seq IN (SELECT j.seq FROM ${seqsOf('v_gone')} AS j);
             END IF;
             UPDATE ${t.sessions} SET checkpoints = checkpoints - v_removed WHERE id = p_id;
           END IF;
         END IF;
         COMMIT;
         SELECT v_removed AS removed;
       END`,
    // pin and unpin lock the session row, as prune and the sweeps do, so that none of them
    // decides on pins another is changing; the row counts the session's pins.
    pin: `CREATE PROCEDURE ${ns}_pin(IN p_id ${ID}, IN p_seq BIGINT, IN p_note LONGTEXT)
       proc: BEGIN
         DECLARE v_head BIGINT DEFAULT NULL;
         ${BEGIN}
         SELECT head INTO v_head FROM ${t.sessions} WHERE id = p_id FOR UPDATE;
         IF v_head IS NULL THEN ROLLBACK; SELECT 'no_session' AS status; LEAVE proc; END IF;
         IF NOT EXISTS (SELECT 1 FROM ${t.checkpoints} WHERE session_id = p_id AND seq = p_seq) THEN
           ROLLBACK; SELECT 'no_seq' AS status; LEAVE proc;
         END IF;
         IF EXISTS (SELECT 1 FROM ${t.pins} WHERE session_id = p_id AND seq = p_seq) THEN
           UPDATE ${t.pins} SET note = p_note WHERE session_id = p_id AND seq = p_seq;
         ELSE
           INSERT INTO ${t.pins} (session_id, seq, note) VALUES (p_id, p_seq, p_note);
           UPDATE ${t.sessions} SET pinned = pinned + 1 WHERE id = p_id;
         END IF;
         COMMIT;
         SELECT 'done' AS status;
       END`,
    unpin: `CREATE PROCEDURE ${ns}_unpin(IN p_id ${ID}, IN p_seq BIGINT)
       proc: BEGIN
         DECLARE v_head BIGINT DEFAULT NULL;
         DECLARE v_found BIGINT DEFAULT 0;
         ${BEGIN}
         SELECT head INTO v_head FROM ${t.sessions} WHERE id = p_id FOR UPDATE;
         IF v_head IS NOT NULL THEN
           DELETE FROM ${t.pins} WHERE session_id = p_id AND seq = p_seq;
           SET v_found = ROW_COUNT();
           IF v_found > 0 THEN UPDATE ${t.sessions} SET pinned = pinned - 1 WHERE id = p_id; END IF;
         END IF;
         COMMIT;
         SELECT v_found AS unpinned;
       END`,
    // delete_idle: the session's checkpoint count when it was (or, with p_dry, would be)
    // deleted: written before p_before and holding no pin, as the locked row says; else null.
    delete_idle: `CREATE PROCEDURE ${ns}_delete_idle(IN p_id ${ID}, IN p_before BIGINT, IN p_dry BOOLEAN)
       proc: BEGIN
         DECLARE v_count BIGINT DEFAULT NULL;
         ${BEGIN}
         SELECT checkpoints INTO v_count FROM ${t.sessions}
          WHERE id = p_id AND updated_at < p_before AND pinned = 0 FOR UPDATE;
         IF v_count IS NULL OR p_dry THEN ROLLBACK; SELECT v_count AS checkpoints; LEAVE proc; END IF;
         DELETE FROM ${t.sessions} WHERE id = p_id;
         ${removeOwnedRows(t, 'p_id')}
         COMMIT;
         SELECT v_count AS checkpoints;
       END`,
    // delete_idle_batch: up to p_limit idle sessions, whole. The locking read takes the oldest
    // sessions written before p_before that hold no pin, as their newest versions say (a writer
    // that changed a row first makes it wait, then see the change), and keeps them locked; the
    // deletes that follow remove those sessions alone (v_ids: their ids, in hex).
    delete_idle_batch: `CREATE PROCEDURE ${ns}_delete_idle_batch(IN p_before BIGINT, IN p_limit BIGINT)
       proc: BEGIN
         DECLARE v_ids LONGTEXT DEFAULT NULL;
         DECLARE v_sessions BIGINT DEFAULT 0;
         DECLARE v_checkpoints BIGINT DEFAULT 0;
         ${BEGIN}
         SELECT CAST(JSON_ARRAYAGG(HEX(b.id)) AS CHAR), COUNT(*), COALESCE(SUM(b.checkpoints), 0)
           INTO v_ids, v_sessions, v_checkpoints
           FROM (SELECT id, checkpoints FROM ${t.sessions}
                  WHERE updated_at < p_before AND pinned = 0
                  ORDER BY updated_at, id LIMIT p_limit FOR UPDATE) AS b;
         IF v_sessions > 0 THEN
           DELETE s FROM ${idsOf('v_ids')} AS j JOIN ${t.sessions} s ON s.id = UNHEX(j.id);
           ${owned(t)
             .map(
               (table) =>
                 `DELETE o FROM ${idsOf('v_ids')} AS j JOIN ${table} o ON o.session_id = UNHEX(j.id);`,
             )
             .join('\n           ')}
         END IF;
         COMMIT;
         SELECT v_sessions AS sessions, v_checkpoints AS checkpoints;
       END`,
    // The change log keeps its latest p_keep changes: the older go, and the meta row says up
    // to which id, so that a watcher further behind learns it must reload (see change-log.ts).
    trim_changes: `CREATE PROCEDURE ${ns}_trim_changes(IN p_keep BIGINT)
       proc: BEGIN
         DECLARE v_through BIGINT;
         ${BEGIN}
         SELECT CAST(MAX(id) AS SIGNED) - p_keep INTO v_through FROM ${t.changes};
         IF v_through IS NULL OR v_through <= 0 THEN ROLLBACK; LEAVE proc; END IF;
         INSERT INTO ${t.meta} (k, value) VALUES ('changes_trimmed_through', v_through)
           ON DUPLICATE KEY UPDATE value = GREATEST(CAST(value AS SIGNED), v_through);
         DELETE FROM ${t.changes} WHERE id <= v_through;
         COMMIT;
       END`,
    // set_tags: the session's tags replaced (the schema's triggers index them), and whether it
    // exists, as its locked row says: a session is never told found and left untagged.
    // Neither updated_at nor the head moves, so the change log's trigger records nothing.
    set_tags: `CREATE PROCEDURE ${ns}_set_tags(IN p_id ${ID}, IN p_tags ${TEXT})
       proc: BEGIN
         DECLARE v_found BIGINT DEFAULT 0;
         ${BEGIN}
         SELECT COUNT(*) INTO v_found FROM ${t.sessions} WHERE id = p_id FOR UPDATE;
         IF v_found > 0 THEN UPDATE ${t.sessions} SET tags = p_tags WHERE id = p_id; END IF;
         COMMIT;
         SELECT v_found AS done;
       END`,
    delete: `CREATE PROCEDURE ${ns}_delete(IN p_id ${ID})
       proc: BEGIN
         DECLARE v_found BIGINT DEFAULT 0;
         ${BEGIN}
         DELETE FROM ${t.sessions} WHERE id = p_id;
         SET v_found = ROW_COUNT();
         ${removeOwnedRows(t, 'p_id')}
         COMMIT;
         SELECT v_found AS deleted;
       END`,
  };
  return [
    // Earlier versions read through this one; no statement calls it now.
    `DROP PROCEDURE IF EXISTS ${ns}_load`,
    ...Object.entries(created).flatMap(([name, text]) => [
      `DROP PROCEDURE IF EXISTS ${ns}_${name}`,
      text,
    ]),
  ];
}
