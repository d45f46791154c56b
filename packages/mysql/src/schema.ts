/**
 * The MySQL / MariaDB schema: tables named `<namespace>_…`, InnoDB, utf8mb4. Ids and keys are
 * VARBINARY, so they compare byte for byte (case, trailing spaces and accents all matter) and
 * sort by UTF-8 bytes. Each mutation is one stored procedure, so it costs one round trip.
 * Everything here runs on MySQL 8.0 and MariaDB 10.11 alike.
 */
import { sqlTables } from '@ckpt/core';

/** The schema version this package writes and reads. */
export const SCHEMA_VERSION = 4;

/** The tables of namespace `ns` (validated: `[a-z][a-z0-9_]*`), each named `<ns>_<table>`. */
export function tables(ns: string) {
  return sqlTables(`${ns}_`);
}

const ID = 'VARBINARY(1020)'; // 255 code points of up to 4 bytes
const TEXT = 'LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';
const TABLE = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4';

// Every procedure reads committed data without gap locks, and undoes itself on any error.
const BEGIN = `
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;`;

/** Migrations, each a list of statements; entry i brings the schema from version i to i + 1. */
export function migrations(ns: string): string[][] {
  const t = tables(ns);
  return [
    [
      `CREATE TABLE ${t.sessions} (
        id              ${ID} NOT NULL PRIMARY KEY,
        head            BIGINT NOT NULL,
        last_seq        BIGINT NOT NULL,
        checkpoints     BIGINT NOT NULL,
        forked_from_id  ${ID} NULL,
        forked_from_seq BIGINT NULL,
        metadata        ${TEXT} NOT NULL,
        created_at      BIGINT NOT NULL,
        updated_at      BIGINT NOT NULL,
        KEY by_update (updated_at, id)
      ) ${TABLE}`,
      `CREATE TABLE ${t.checkpoints} (
        session_id ${ID} NOT NULL,
        seq        BIGINT NOT NULL,
        parent     BIGINT NULL,
        created_at BIGINT NOT NULL,
        metadata   ${TEXT} NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) ${TABLE}`,
      `CREATE TABLE ${t.bodies} (
        session_id ${ID} NOT NULL,
        seq        BIGINT NOT NULL,
        data       ${TEXT} NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) ${TABLE}`,
      `CREATE TABLE ${t.transcripts} (
        session_id ${ID} NOT NULL,
        seq        BIGINT NOT NULL,
        items      ${TEXT} NOT NULL,
        PRIMARY KEY (session_id, seq)
      ) ${TABLE}`,
      `CREATE TABLE ${t.idempotency} (
        session_id ${ID} NOT NULL,
        k          ${ID} NOT NULL,
        seq        BIGINT NOT NULL,
        PRIMARY KEY (session_id, k)
      ) ${TABLE}`,
      `CREATE TABLE ${t.state} (
        scope ${ID} NOT NULL,
        k     ${ID} NOT NULL,
        value ${TEXT} NOT NULL,
        PRIMARY KEY (scope, k)
      ) ${TABLE}`,
      `CREATE TABLE ${t.kv} (
        k     VARBINARY(3072) NOT NULL PRIMARY KEY,
        value ${TEXT} NOT NULL
      ) ${TABLE}`,

      lockThenUpdateAppend(ns, false),

      rollbackProcedure(ns, false),

      forkProcedure(ns, false),

      `CREATE PROCEDURE ${ns}_prune(IN p_id ${ID}, IN p_keep BIGINT)
       proc: BEGIN
         DECLARE v_head BIGINT DEFAULT NULL;
         DECLARE v_below BIGINT DEFAULT NULL;
         DECLARE v_skip BIGINT DEFAULT p_keep - 1;
         DECLARE v_removed BIGINT DEFAULT 0;
         ${BEGIN}
         SELECT head INTO v_head FROM ${t.sessions} WHERE id = p_id FOR UPDATE;
         IF v_head IS NOT NULL THEN
           SELECT seq INTO v_below FROM ${t.checkpoints} WHERE session_id = p_id ORDER BY seq DESC LIMIT v_skip, 1;
         END IF;
         IF v_below IS NOT NULL THEN
           DELETE FROM ${t.bodies} WHERE session_id = p_id AND seq < v_below AND seq <> v_head;
           DELETE FROM ${t.transcripts} WHERE session_id = p_id AND seq < v_below AND seq <> v_head;
           DELETE FROM ${t.checkpoints} WHERE session_id = p_id AND seq < v_below AND seq <> v_head;
           SET v_removed = ROW_COUNT();
           UPDATE ${t.sessions} SET checkpoints = checkpoints - v_removed WHERE id = p_id;
         END IF;
         COMMIT;
         SELECT v_removed AS removed;
       END`,

      // Version 1 read through this procedure, whose statements the server prepares once per
      // connection, where a statement sent as text is parsed on every call. Stores now prepare
      // their plain SELECTs once per connection instead; the procedure stays for earlier ones.
      `CREATE PROCEDURE ${ns}_load(IN p_id ${ID}, IN p_seq BIGINT)
       BEGIN
         IF p_seq IS NULL THEN
           SELECT head INTO p_seq FROM ${t.sessions} WHERE id = p_id;
         END IF;
         SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
           FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
          WHERE c.session_id = p_id AND c.seq = p_seq;
       END`,

      `CREATE PROCEDURE ${ns}_delete(IN p_id ${ID})
       proc: BEGIN
         DECLARE v_found BIGINT DEFAULT 0;
         ${BEGIN}
         DELETE FROM ${t.sessions} WHERE id = p_id;
         SET v_found = ROW_COUNT();
         DELETE FROM ${t.checkpoints} WHERE session_id = p_id;
         DELETE FROM ${t.bodies} WHERE session_id = p_id;
         DELETE FROM ${t.transcripts} WHERE session_id = p_id;
         DELETE FROM ${t.idempotency} WHERE session_id = p_id;
         COMMIT;
         SELECT v_found AS deleted;
       END`,
    ],
    [
      // Version 1 read the head and then its checkpoint in two statements, each with its own
      // snapshot: a rollback or checkpoint and a prune in between could leave nothing to read.
      // One statement reads both from one snapshot.
      `DROP PROCEDURE IF EXISTS ${ns}_load`,
      `CREATE PROCEDURE ${ns}_load(IN p_id ${ID}, IN p_seq BIGINT)
         SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
           FROM ${t.sessions} s
           JOIN ${t.checkpoints} c ON c.session_id = s.id AND c.seq = COALESCE(p_seq, s.head)
           JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
          WHERE s.id = p_id`,
    ],
    [
      // The session row keeps the head's parent and creation time (it kept its metadata
      // already), so that a load of the head reads two rows, not three.
      `ALTER TABLE ${t.sessions} ADD COLUMN head_parent BIGINT NULL,
                                ADD COLUMN head_created_at BIGINT NULL`,
      copyHeadDetails(t),
      `DROP PROCEDURE ${ns}_append`,
      lockThenUpdateAppend(ns, true),
      `DROP PROCEDURE ${ns}_rollback`,
      rollbackProcedure(ns, true),
      `DROP PROCEDURE ${ns}_fork`,
      forkProcedure(ns, true),
      `DROP PROCEDURE ${ns}_load`,
      // One statement for either case, so that each reads from one snapshot.
      `CREATE PROCEDURE ${ns}_load(IN p_id ${ID}, IN p_seq BIGINT)
       IF p_seq IS NULL THEN
         SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at,
                s.metadata, b.data
           FROM ${t.sessions} s JOIN ${t.bodies} b ON b.session_id = s.id AND b.seq = s.head
          WHERE s.id = p_id;
       ELSE
         SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
           FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
          WHERE c.session_id = p_id AND c.seq = p_seq;
       END IF`,
    ],
    [
      // append takes the next seq with the statement that locks the session row, instead of
      // locking it first and updating it after: one statement fewer on every checkpoint.
      `DROP PROCEDURE ${ns}_append`,
      appendProcedure(ns),
    ],
  ];
}

// The procedures that move a session's head. From version 3 (`headDetails`) each also keeps
// the head's parent and creation time in the session row, beside its metadata, so that a load
// of the head reads the session row and the body alone.

// append: the first statement takes the session row's exclusive lock whether or not the
// session exists, so no locking read ever touches a missing row. From version 4 that
// statement also takes the next seq and moves the head: it inserts the session at seq 1, or
// updates the row it found. A call that must not write (its idempotency key was seen, or the
// head is not the expected one) then rolls it back, which leaves the row as it was.
function appendProcedure(ns: string): string {
  const t = tables(ns);
  return `${appendSignature(ns)}
       proc: BEGIN
         DECLARE v_seq BIGINT;
         DECLARE v_parent BIGINT;
         DECLARE v_seen BIGINT DEFAULT NULL;
         ${BEGIN}
         -- Each value is set from the row as it was: the same under MariaDB's
         -- SIMULTANEOUS_ASSIGNMENT as under the usual left-to-right assignment.
         INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_parent, head_created_at,
                                    metadata, created_at, updated_at)
         VALUES (p_id, 1, 1, 1, NULL, p_now, p_metadata, p_now, p_now)
         ON DUPLICATE KEY UPDATE head_parent = head, head = last_seq + 1, last_seq = last_seq + 1,
                                 checkpoints = checkpoints + 1, head_created_at = p_now,
                                 metadata = p_metadata, updated_at = p_now;
         -- A transaction reads its own writes: the seq just taken and the head it replaced.
         SELECT head, head_parent INTO v_seq, v_parent FROM ${t.sessions} WHERE id = p_id;
         IF p_key IS NOT NULL AND v_seq > 1 THEN
           SELECT seq INTO v_seen FROM ${t.idempotency} WHERE session_id = p_id AND k = p_key;
         END IF;
         ${refusals(t, 'v_parent')}
         ${checkpointRows(t, 'v_parent')}
         ${keyAndCommit(t, 'v_parent')}
       END`;
}

// append up to version 3: the first statement locks the session row (a new row is a
// placeholder with last_seq 0 until this transaction writes seq 1), a locking read then
// reads it, and an UPDATE moves the head once the checks pass.
function lockThenUpdateAppend(ns: string, headDetails: boolean): string {
  const t = tables(ns);
  return `${appendSignature(ns)}
       proc: BEGIN
         DECLARE v_head BIGINT;
         DECLARE v_last BIGINT;
         DECLARE v_seen BIGINT DEFAULT NULL;
         DECLARE v_seq BIGINT;
         ${BEGIN}
         INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, metadata, created_at, updated_at)
         VALUES (p_id, 0, 0, 0, p_metadata, p_now, p_now) ON DUPLICATE KEY UPDATE id = id;
         SELECT head, last_seq INTO v_head, v_last FROM ${t.sessions} WHERE id = p_id FOR UPDATE;
         IF v_last = 0 THEN SET v_head = NULL; END IF;
         IF p_key IS NOT NULL AND v_last > 0 THEN
           SELECT seq INTO v_seen FROM ${t.idempotency} WHERE session_id = p_id AND k = p_key;
         END IF;
         ${refusals(t, 'v_head')}
         SET v_seq = v_last + 1;
         ${checkpointRows(t, 'v_head')}
         UPDATE ${t.sessions} SET head = v_seq, last_seq = v_seq, checkpoints = checkpoints + 1,
                metadata = p_metadata, updated_at = p_now${
                  headDetails ? ', head_parent = v_head, head_created_at = p_now' : ''
                }
          WHERE id = p_id;
         ${keyAndCommit(t, 'v_head')}
       END`;
}

// What both versions of append share: its signature, the refusals that undo the call (the
// idempotency key `v_seen` was seen; the head `head` is not the expected one), the rows of
// checkpoint `v_seq` whose parent is `parent`, and the end: the key recorded, the commit, and
// the reply.
function appendSignature(ns: string): string {
  return `CREATE PROCEDURE ${ns}_append(IN p_id ${ID}, IN p_data LONGTEXT, IN p_metadata LONGTEXT,
         IN p_transcript LONGTEXT, IN p_check BOOLEAN, IN p_expected BIGINT, IN p_key ${ID}, IN p_now BIGINT)`;
}

function refusals(t: ReturnType<typeof tables>, head: string): string {
  return `IF v_seen IS NOT NULL THEN
           ROLLBACK;
           SELECT 'replayed' AS status, v_seen AS seq, c.parent, NULL AS head, b.data, c.metadata, c.created_at
             FROM (SELECT 1 AS one) AS one
             LEFT JOIN ${t.checkpoints} c ON c.session_id = p_id AND c.seq = v_seen
             LEFT JOIN ${t.bodies} b ON b.session_id = p_id AND b.seq = v_seen;
           LEAVE proc;
         END IF;
         IF p_check AND NOT (${head} <=> p_expected) THEN
           ROLLBACK;
           SELECT 'conflict' AS status, NULL AS seq, NULL AS parent, ${head} AS head;
           LEAVE proc;
         END IF;`;
}

function checkpointRows(t: ReturnType<typeof tables>, parent: string): string {
  return `INSERT INTO ${t.checkpoints} VALUES (p_id, v_seq, ${parent}, p_now, p_metadata);
         INSERT INTO ${t.bodies} VALUES (p_id, v_seq, p_data);
         IF p_transcript <> '[]' THEN
           INSERT INTO ${t.transcripts} VALUES (p_id, v_seq, p_transcript);
         END IF;`;
}

function keyAndCommit(t: ReturnType<typeof tables>, parent: string): string {
  return `IF p_key IS NOT NULL THEN
           INSERT INTO ${t.idempotency} VALUES (p_id, p_key, v_seq);
         END IF;
         COMMIT;
         SELECT 'written' AS status, v_seq AS seq, ${parent} AS parent;`;
}

function rollbackProcedure(ns: string, headDetails: boolean): string {
  const t = tables(ns);
  return `CREATE PROCEDURE ${ns}_rollback(IN p_id ${ID}, IN p_seq BIGINT, IN p_check BOOLEAN, IN p_expected BIGINT, IN p_now BIGINT)
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
         ${headDetails ? `${copyHeadDetails(t)} AND s.id = p_id;` : ''}
         COMMIT;
         SELECT 'done' AS status, p_seq AS head;
       END`;
}

// fork copies the chain one checkpoint at a time, walking up the parents.
function forkProcedure(ns: string, headDetails: boolean): string {
  const t = tables(ns);
  return `CREATE PROCEDURE ${ns}_fork(IN p_id ${ID}, IN p_at BIGINT, IN p_new ${ID}, IN p_now BIGINT)
       proc: BEGIN
         DECLARE v_head BIGINT DEFAULT NULL;
         DECLARE v_metadata LONGTEXT DEFAULT NULL;
         DECLARE v_seq BIGINT;
         DECLARE v_parent BIGINT;
         DECLARE v_count BIGINT DEFAULT 0;
         ${BEGIN}
         SELECT head INTO v_head FROM ${t.sessions} WHERE id = p_id LOCK IN SHARE MODE;
         IF v_head IS NULL THEN ROLLBACK; SELECT 'no_session' AS status, NULL AS seq; LEAVE proc; END IF;
         SET v_seq = COALESCE(p_at, v_head);
         SELECT metadata INTO v_metadata FROM ${t.checkpoints} WHERE session_id = p_id AND seq = v_seq;
         IF v_metadata IS NULL THEN ROLLBACK; SELECT 'no_seq' AS status, NULL AS seq; LEAVE proc; END IF;
         INSERT IGNORE INTO ${t.sessions} (id, head, last_seq, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at)
         VALUES (p_new, v_seq, v_seq, 0, p_id, v_seq, v_metadata, p_now, p_now);
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
         UPDATE ${t.sessions} SET checkpoints = v_count WHERE id = p_new;
         ${headDetails ? `${copyHeadDetails(t)} AND s.id = p_new;` : ''}
         COMMIT;
         SELECT 'done' AS status, COALESCE(p_at, v_head) AS seq;
       END`;
}

/** An UPDATE that copies each head checkpoint's parent and time into its session row. */
function copyHeadDetails(t: ReturnType<typeof tables>): string {
  return `UPDATE ${t.sessions} s JOIN ${t.checkpoints} c ON c.session_id = s.id AND c.seq = s.head
            SET s.head_parent = c.parent, s.head_created_at = c.created_at WHERE s.head > 0`;
}
