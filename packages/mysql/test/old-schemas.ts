/**
 * The procedures that moved a session's head as earlier schema versions defined them, frozen
 * here so that the upgrade tests can write sessions through an older schema's own calls. The
 * procedures no version changed since the first are the package's own (stored-code.ts).
 */
import type { Pool } from 'mysql2/promise';
import { BYTES, ID, migrations, tables } from '../src/schema.js';
import { procedures } from '../src/stored-code.js';

/** Make namespace `ns` as version `version`'s migrations and procedures left it, through `admin`. */
export async function writeOldSchema(admin: Pool, ns: string, version: number): Promise<void> {
  await writeOldTables(admin, ns, version);
  for (const statement of oldProcedures(ns, version)) await admin.query(statement);
}

/**
 * Make namespace `ns`'s tables as version `version`'s migrations left them, recorded at that
 * version, without procedures: for tests that write its rows themselves.
 */
export async function writeOldTables(admin: Pool, ns: string, version: number): Promise<void> {
  await admin.query(
    `CREATE TABLE ${ns}_meta (k VARCHAR(64) NOT NULL PRIMARY KEY, value VARCHAR(64) NOT NULL)`,
  );
  for (const step of migrations(ns).slice(0, version)) {
    for (const statement of step) await admin.query(statement);
  }
  await admin.query(`INSERT INTO ${ns}_meta VALUES ('schema_version', ?)`, [String(version)]);
}

/**
 * Copy every row of table `from` (this version's) into `to` (an older version's), through the
 * columns `to` has: those a later version added stay behind.
 */
export async function copyRows(admin: Pool, from: string, to: string): Promise<void> {
  const [columns] = (await admin.query(
    `SELECT column_name AS name FROM information_schema.columns
      WHERE table_schema = DATABASE() AND table_name = ? ORDER BY ordinal_position`,
    [to],
  )) as unknown as [{ name: string }[]];
  const list = columns.map((column) => `\`${column.name}\``).join(', ');
  await admin.query(`INSERT INTO ${to} (${list}) SELECT ${list} FROM ${from}`);
}

const BEGIN = `
    DECLARE EXIT HANDLER FOR SQLEXCEPTION BEGIN ROLLBACK; RESIGNAL; END;
    SET TRANSACTION ISOLATION LEVEL READ COMMITTED;
    START TRANSACTION;`;

/**
 * The statements that leave the procedures that append, roll back and fork in namespace `ns` as
 * version `version` (1 to 5) had them (version 5 only added append_batch, which the upgrade
 * tests do not call).
 */
export function oldProcedures(ns: string, version: number): string[] {
  const t = tables(ns);
  const heads =
    version < 3 ? versionOne(ns, t) : version < 4 ? versionThree(ns, t) : versionFour(ns, t);
  return [
    ...procedures(ns),
    ...['append', 'rollback', 'fork'].flatMap((name, i) => [
      `DROP PROCEDURE ${ns}_${name}`,
      heads[i]!,
    ]),
  ];
}

// Versions 1 and 2: append inserts a placeholder row to lock it, reads it, then updates it.
function versionOne(ns: string, t: ReturnType<typeof tables>): string[] {
  return [
    `CREATE PROCEDURE ${ns}_append(IN p_id ${ID}, IN p_data LONGTEXT, IN p_metadata LONGTEXT,
         IN p_transcript LONGTEXT, IN p_check BOOLEAN, IN p_expected BIGINT, IN p_key ${ID}, IN p_now BIGINT)
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
         IF v_seen IS NOT NULL THEN
           ROLLBACK;
           SELECT 'replayed' AS status, v_seen AS seq, c.parent, NULL AS head, b.data, c.metadata, c.created_at
             FROM (SELECT 1 AS one) AS one
             LEFT JOIN ${t.checkpoints} c ON c.session_id = p_id AND c.seq = v_seen
             LEFT JOIN ${t.bodies} b ON b.session_id = p_id AND b.seq = v_seen;
           LEAVE proc;
         END IF;
         IF p_check AND NOT (v_head <=> p_expected) THEN
           ROLLBACK;
           SELECT 'conflict' AS status, NULL AS seq, NULL AS parent, v_head AS head;
           LEAVE proc;
         END IF;
         SET v_seq = v_last + 1;
         INSERT INTO ${t.checkpoints} VALUES (p_id, v_seq, v_head, p_now, p_metadata);
         INSERT INTO ${t.bodies} VALUES (p_id, v_seq, p_data);
         IF p_transcript <> '[]' THEN
           INSERT INTO ${t.transcripts} VALUES (p_id, v_seq, p_transcript);
         END IF;
         UPDATE ${t.sessions} SET head = v_seq, last_seq = v_seq, checkpoints = checkpoints + 1,
                metadata = p_metadata, updated_at = p_now
          WHERE id = p_id;
         IF p_key IS NOT NULL THEN
           INSERT INTO ${t.idempotency} VALUES (p_id, p_key, v_seq);
         END IF;
         COMMIT;
         SELECT 'written' AS status, v_seq AS seq, v_head AS parent;
       END`,
    `CREATE PROCEDURE ${ns}_rollback(IN p_id ${ID}, IN p_seq BIGINT, IN p_check BOOLEAN, IN p_expected BIGINT, IN p_now BIGINT)
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
         
         COMMIT;
         SELECT 'done' AS status, p_seq AS head;
       END`,
    `CREATE PROCEDURE ${ns}_fork(IN p_id ${ID}, IN p_at BIGINT, IN p_new ${ID}, IN p_now BIGINT)
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
         
         COMMIT;
         SELECT 'done' AS status, COALESCE(p_at, v_head) AS seq;
       END`,
  ];
}

// Version 3: the session row keeps the head's parent and time; append still locks, then updates.
function versionThree(ns: string, t: ReturnType<typeof tables>): string[] {
  return [
    `CREATE PROCEDURE ${ns}_append(IN p_id ${ID}, IN p_data LONGTEXT, IN p_metadata LONGTEXT,
         IN p_transcript LONGTEXT, IN p_check BOOLEAN, IN p_expected BIGINT, IN p_key ${ID}, IN p_now BIGINT)
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
         IF v_seen IS NOT NULL THEN
           ROLLBACK;
           SELECT 'replayed' AS status, v_seen AS seq, c.parent, NULL AS head, b.data, c.metadata, c.created_at
             FROM (SELECT 1 AS one) AS one
             LEFT JOIN ${t.checkpoints} c ON c.session_id = p_id AND c.seq = v_seen
             LEFT JOIN ${t.bodies} b ON b.session_id = p_id AND b.seq = v_seen;
           LEAVE proc;
         END IF;
         IF p_check AND NOT (v_head <=> p_expected) THEN
           ROLLBACK;
           SELECT 'conflict' AS status, NULL AS seq, NULL AS parent, v_head AS head;
           LEAVE proc;
         END IF;
         SET v_seq = v_last + 1;
         INSERT INTO ${t.checkpoints} VALUES (p_id, v_seq, v_head, p_now, p_metadata);
         INSERT INTO ${t.bodies} VALUES (p_id, v_seq, p_data);
         IF p_transcript <> '[]' THEN
           INSERT INTO ${t.transcripts} VALUES (p_id, v_seq, p_transcript);
         END IF;
         UPDATE ${t.sessions} SET head = v_seq, last_seq = v_seq, checkpoints = checkpoints + 1,
                metadata = p_metadata, updated_at = p_now, head_parent = v_head, head_created_at = p_now
          WHERE id = p_id;
         IF p_key IS NOT NULL THEN
           INSERT INTO ${t.idempotency} VALUES (p_id, p_key, v_seq);
         END IF;
         COMMIT;
         SELECT 'written' AS status, v_seq AS seq, v_head AS parent;
       END`,
    `CREATE PROCEDURE ${ns}_rollback(IN p_id ${ID}, IN p_seq BIGINT, IN p_check BOOLEAN, IN p_expected BIGINT, IN p_now BIGINT)
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
    `CREATE PROCEDURE ${ns}_fork(IN p_id ${ID}, IN p_at BIGINT, IN p_new ${ID}, IN p_now BIGINT)
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
         UPDATE ${t.sessions} s JOIN ${t.checkpoints} c ON c.session_id = s.id AND c.seq = s.head
            SET s.head_parent = c.parent, s.head_created_at = c.created_at WHERE s.head > 0 AND s.id = p_new;
         COMMIT;
         SELECT 'done' AS status, COALESCE(p_at, v_head) AS seq;
       END`,
  ];
}

// Versions 4 and 5: append takes the row lock and the next seq in one statement; rollback and
// fork are version 3's; no checkpoint needs another.
function versionFour(ns: string, t: ReturnType<typeof tables>): string[] {
  const [, rollback, fork] = versionThree(ns, t);
  return [
    `CREATE PROCEDURE ${ns}_append(IN p_id ${ID}, IN p_data LONGTEXT, IN p_metadata LONGTEXT,
         IN p_transcript LONGTEXT, IN p_check BOOLEAN, IN p_expected BIGINT, IN p_key ${ID}, IN p_now BIGINT)
       proc: BEGIN
         DECLARE v_seq BIGINT;
         DECLARE v_parent BIGINT;
         DECLARE v_seen BIGINT DEFAULT NULL;
         ${BEGIN}
         INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_parent, head_created_at,
                                    metadata, created_at, updated_at)
         VALUES (p_id, 1, 1, 1, NULL, p_now, p_metadata, p_now, p_now)
         ON DUPLICATE KEY UPDATE head_parent = head, head = last_seq + 1, last_seq = last_seq + 1,
                                 checkpoints = checkpoints + 1, head_created_at = p_now,
                                 metadata = p_metadata, updated_at = p_now;
         SELECT head, head_parent INTO v_seq, v_parent FROM ${t.sessions} WHERE id = p_id;
         IF p_key IS NOT NULL AND v_seq > 1 THEN
           SELECT seq INTO v_seen FROM ${t.idempotency} WHERE session_id = p_id AND k = p_key;
         END IF;
         IF v_seen IS NOT NULL THEN
           ROLLBACK;
           SELECT 'replayed' AS status, v_seen AS seq, c.parent, NULL AS head, b.data, c.metadata, c.created_at
             FROM (SELECT 1 AS one) AS one
             LEFT JOIN ${t.checkpoints} c ON c.session_id = p_id AND c.seq = v_seen
             LEFT JOIN ${t.bodies} b ON b.session_id = p_id AND b.seq = v_seen;
           LEAVE proc;
         END IF;
         IF p_check AND NOT (v_parent <=> p_expected) THEN
           ROLLBACK;
           SELECT 'conflict' AS status, NULL AS seq, NULL AS parent, v_parent AS head;
           LEAVE proc;
         END IF;
         INSERT INTO ${t.checkpoints} VALUES (p_id, v_seq, v_parent, p_now, p_metadata);
         INSERT INTO ${t.bodies} VALUES (p_id, v_seq, p_data);
         IF p_transcript <> '[]' THEN
           INSERT INTO ${t.transcripts} VALUES (p_id, v_seq, p_transcript);
         END IF;
         IF p_key IS NOT NULL THEN
           INSERT INTO ${t.idempotency} VALUES (p_id, p_key, v_seq);
         END IF;
         COMMIT;
         SELECT 'written' AS status, v_seq AS seq, v_parent AS parent;
       END`,
    rollback!,
    fork!,
  ];
}

/**
 * The statements that leave namespace `ns` with `append` as versions 9 and 10 had it (this
 * version's calls append_tagged, which writes the tags column those versions lack); the other
 * procedures are this version's, of which such tests call only those no version since changed.
 */
export function versionTenProcedures(ns: string): string[] {
  const t = tables(ns);
  return [
    ...procedures(ns),
    `DROP PROCEDURE ${ns}_append`,
    `CREATE PROCEDURE ${ns}_append(IN p_id ${ID}, IN p_data ${BYTES}, IN p_metadata LONGTEXT,
         IN p_transcript ${BYTES}, IN p_check BOOLEAN, IN p_expected BIGINT, IN p_key ${ID}, IN p_now BIGINT,
         IN p_needs LONGTEXT)
       proc: BEGIN
         DECLARE v_seq BIGINT;
         DECLARE v_parent BIGINT;
         DECLARE v_seen BIGINT DEFAULT NULL;
         ${BEGIN}
         INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_parent, head_created_at,
                                    metadata, created_at, updated_at)
         VALUES (p_id, 1, 1, 1, NULL, p_now, p_metadata, p_now, p_now)
         ON DUPLICATE KEY UPDATE head_parent = head, head = last_seq + 1, last_seq = last_seq + 1,
                                 checkpoints = checkpoints + 1, head_created_at = p_now,
                                 metadata = p_metadata, updated_at = p_now;
         SELECT head, head_parent INTO v_seq, v_parent FROM ${t.sessions} WHERE id = p_id;
         IF p_key IS NOT NULL AND v_seq > 1 THEN
           SELECT seq INTO v_seen FROM ${t.idempotency} WHERE session_id = p_id AND k = p_key;
         END IF;
         IF v_seen IS NOT NULL THEN
           ROLLBACK;
           SELECT 'replayed' AS status, v_seen AS seq, c.parent, NULL AS head, b.data, c.metadata, c.created_at,
                  p.seq IS NOT NULL AS pinned, p.note AS pin_note
             FROM (SELECT 1 AS one) AS one
             LEFT JOIN ${t.checkpoints} c ON c.session_id = p_id AND c.seq = v_seen
             LEFT JOIN ${t.bodies} b ON b.session_id = p_id AND b.seq = v_seen
             LEFT JOIN ${t.pins} p ON p.session_id = p_id AND p.seq = v_seen;
           LEAVE proc;
         END IF;
         IF p_check AND NOT (v_parent <=> p_expected) THEN
           ROLLBACK;
           SELECT 'conflict' AS status, NULL AS seq, NULL AS parent, v_parent AS head;
           LEAVE proc;
         END IF;
         IF p_needs <> '[]' THEN
           INSERT INTO ${t.needs} (session_id, seq, needed)
           SELECT p_id, v_seq, c.seq FROM ${t.checkpoints} c
            WHERE c.session_id = p_id AND c.seq < v_seq
              AND c.seq IN (SELECT j.seq FROM JSON_TABLE(p_needs, '$[*]' COLUMNS (seq BIGINT PATH '$')) AS j);
         END IF;
         INSERT INTO ${t.checkpoints} VALUES (p_id, v_seq, v_parent, p_now, p_metadata);
         INSERT INTO ${t.bodies} VALUES (p_id, v_seq, p_data);
         IF p_transcript <> '[]' THEN
           INSERT INTO ${t.transcripts} VALUES (p_id, v_seq, p_transcript);
         END IF;
         IF p_key IS NOT NULL THEN
           INSERT INTO ${t.idempotency} VALUES (p_id, p_key, v_seq);
         END IF;
         COMMIT;
         SELECT 'written' AS status, v_seq AS seq, v_parent AS parent;
       END`,
  ];
}
