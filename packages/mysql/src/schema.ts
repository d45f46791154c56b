/**
 * The MySQL / MariaDB schema: tables named `<namespace>_…`, InnoDB, utf8mb4. Ids and keys are
 * VARBINARY, so they compare byte for byte (case, trailing spaces and accents all matter) and
 * sort by UTF-8 bytes. Values (checkpoint data, transcript items, state values) are LONGBLOB
 * from version 8: bytes, as storedBytesOf makes them, compared byte for byte. Everything here
 * runs on MySQL 8.0 and MariaDB 10.11 alike. The migration steps change tables and are frozen
 * once released: a step is never edited, a change is a new step. The procedures the backend
 * calls are defined once, as they are now, in stored-code.ts, and created anew after the steps
 * of any upgrade.
 */
import { sqlTables } from '@ckpt/core/sql';

/** The schema version this package writes and reads. */
export const SCHEMA_VERSION = 11;

/** The tables of namespace `ns` (validated: `[a-z][a-z0-9_]*`), each named `<ns>_<table>`. */
export function tables(ns: string) {
  return sqlTables(`${ns}_`);
}

export const ID = 'VARBINARY(1020)'; // 255 code points of up to 4 bytes
export const TEXT = 'LONGTEXT CHARACTER SET utf8mb4 COLLATE utf8mb4_bin';
/** A value column (checkpoint data, transcript items, a state value): bytes, compared byte for byte. */
export const BYTES = 'LONGBLOB';
/** A tag key (ASCII, see MAX_TAG_KEY_LENGTH) and value (at most MAX_TAG_VALUE_BYTES of UTF-8), as bytes. */
const TAG_KEY = 'VARBINARY(64)';
const TAG_VALUE = 'VARBINARY(256)';
const TABLE = 'ENGINE=InnoDB DEFAULT CHARSET=utf8mb4';

/** Migrations, each a list of statements; entry i brings the tables from version i to i + 1. */
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
    ],
    // Version 2 changed a procedure only.
    [],
    // The session row keeps the head's parent and creation time (it kept its metadata
    // already), so that a load of the head reads two rows, not three.
    [
      `ALTER TABLE ${t.sessions} ADD COLUMN head_parent BIGINT NULL,
                                ADD COLUMN head_created_at BIGINT NULL`,
      `UPDATE ${t.sessions} s JOIN ${t.checkpoints} c ON c.session_id = s.id AND c.seq = s.head
            SET s.head_parent = c.parent, s.head_created_at = c.created_at WHERE s.head > 0`,
    ],
    // Version 4 changed append only.
    [],
    // Version 5 added append_batch only.
    [],
    // What a checkpoint needs: a row per earlier checkpoint it names, written only for the
    // checkpoints that name some, so that a session without needs has no row here.
    [
      `CREATE TABLE ${t.needs} (
        session_id ${ID} NOT NULL,
        seq        BIGINT NOT NULL,
        needed     BIGINT NOT NULL,
        PRIMARY KEY (session_id, seq, needed)
      ) ${TABLE}`,
    ],
    // Pins: a row per pinned checkpoint, with its note. The session row counts them, so that
    // whether a session may be swept is a column of the row a sweep locks (a locking read sees
    // the row's newest version).
    [
      `CREATE TABLE ${t.pins} (
        session_id ${ID} NOT NULL,
        seq        BIGINT NOT NULL,
        note       ${TEXT} NULL,
        PRIMARY KEY (session_id, seq)
      ) ${TABLE}`,
      `ALTER TABLE ${t.sessions} ADD COLUMN pinned BIGINT NOT NULL DEFAULT 0`,
    ],
    // Values as bytes: an encoded value is stored as its bytes, not as base64 text. Text
    // becomes its UTF-8 bytes; then each encoded value is rewritten in the form storedBytesOf
    // gives it (see encodedAsBytes), so that every row holds what this version writes and a
    // compare-and-set or a rewrite that compares the value read finds it.
    [
      `ALTER TABLE ${t.bodies} MODIFY data ${BYTES} NOT NULL`,
      `ALTER TABLE ${t.transcripts} MODIFY items ${BYTES} NOT NULL`,
      `ALTER TABLE ${t.state} MODIFY value ${BYTES} NOT NULL`,
      encodedAsBytes(t.bodies, 'data'),
      encodedAsBytes(t.transcripts, 'items'),
      encodedAsBytes(t.state, 'value'),
    ],
    // Values compressed by MariaDB: a COMPRESSED column holds each value above
    // column_compression_threshold (100 bytes by default) zlib-compressed, where that makes it
    // smaller, and every read takes it back, so no statement changes: checkpoint data is JSON,
    // which InnoDB otherwise holds as it is (PostgreSQL compresses such values itself; see
    // the README for the figures). MySQL has no compressed columns and reads the attribute as
    // a comment: the step leaves its columns as they were.
    [
      `ALTER TABLE ${t.bodies} MODIFY data ${BYTES} /*M! COMPRESSED */ NOT NULL`,
      `ALTER TABLE ${t.transcripts} MODIFY items ${BYTES} /*M! COMPRESSED */ NOT NULL`,
      `ALTER TABLE ${t.state} MODIFY value ${BYTES} /*M! COMPRESSED */ NOT NULL`,
    ],
    // The change log that watch() follows: a row for each change of a session's row (a
    // checkpoint, a rollback, a fork, a prune, a delete) and of a state value, written by
    // triggers in the transaction that makes the change, so that every statement and every
    // process records it. InnoDB hands out its ids as rows are inserted, not as they commit:
    // change-log.ts reads it so that none is skipped. Each trigger inserts with INSERT ...
    // SELECT, for which InnoDB (innodb_autoinc_lock_mode 0 or 1) holds the table's AUTO-INC
    // lock until the row is in the index: no id is taken and not yet visible to a locking
    // read while a later one commits. The rows a call writes and then undoes leave gaps.
    [
      `CREATE TABLE ${t.changes} (
        id         BIGINT UNSIGNED NOT NULL AUTO_INCREMENT PRIMARY KEY,
        session_id ${ID} NOT NULL,
        kind       VARCHAR(10) CHARACTER SET ascii NOT NULL,
        seq        BIGINT NULL
      ) ${TABLE}`,
      changeTrigger(
        t.changes,
        'at_insert',
        `AFTER INSERT ON ${t.sessions}`,
        "NEW.id, IF(NEW.forked_from_id IS NULL, 'checkpoint', 'fork'), NEW.head",
      ),
      changeTrigger(
        t.changes,
        'at_update',
        `AFTER UPDATE ON ${t.sessions}`,
        `NEW.id, CASE WHEN NEW.last_seq <> OLD.last_seq THEN 'checkpoint'
                      WHEN NEW.head <> OLD.head THEN 'rollback' ELSE 'prune' END, NEW.head
           FROM DUAL
          WHERE NEW.last_seq <> OLD.last_seq OR NEW.head <> OLD.head OR NEW.checkpoints < OLD.checkpoints`,
      ),
      changeTrigger(
        t.changes,
        'at_delete',
        `AFTER DELETE ON ${t.sessions}`,
        "OLD.id, 'delete', NULL",
      ),
      ...(['INSERT', 'UPDATE', 'DELETE'] as const).map((event) =>
        changeTrigger(
          t.changes,
          `at_state_${event.toLowerCase()}`,
          `AFTER ${event} ON ${t.state}`,
          `${event === 'DELETE' ? 'OLD' : 'NEW'}.scope, 'state', NULL`,
        ),
      ),
    ],
    // Tags: the session row holds them as JSON text (null: none), which reads give back; the
    // tags table indexes them, a row a tag, keyed by session then key, and by tag then the
    // catalog's order (updated_at, then id, both descending), so that a filtered listing walks
    // one tag's rows in the order it pages. Bytes, as ids are: compared and ordered byte for
    // byte (no PAD SPACE: 'a' and 'a ' are two values), and the index's ids order as the
    // catalog's. Triggers on the session row keep the table in step with it (its tags, its
    // updated_at, its deletion) in the transaction of every write, whatever statement makes
    // it, so no write can leave the index behind the row. Adding the column is instant on both
    // servers; old rows have no tags.
    [
      `ALTER TABLE ${t.sessions} ADD COLUMN tags ${TEXT} NULL`,
      `CREATE TABLE ${t.tags} (
        session_id ${ID} NOT NULL,
        k          ${TAG_KEY} NOT NULL,
        value      ${TAG_VALUE} NOT NULL,
        updated_at BIGINT NOT NULL,
        PRIMARY KEY (session_id, k),
        KEY by_tag (k, value, updated_at DESC, session_id DESC)
      ) ${TABLE}`,
      `CREATE TRIGGER ${t.tags}_at_insert AFTER INSERT ON ${t.sessions} FOR EACH ROW
        ${tagRowsOf(t.tags)}`,
      // A write of new tags replaces the rows; one that moves updated_at alone moves theirs
      // (a session without tags has none to move). id never changes.
      `CREATE TRIGGER ${t.tags}_at_update AFTER UPDATE ON ${t.sessions} FOR EACH ROW
       BEGIN
         IF NOT (NEW.tags <=> OLD.tags) THEN
           DELETE FROM ${t.tags} WHERE session_id = NEW.id;
           ${tagRowsOf(t.tags)};
         ELSEIF NEW.updated_at <> OLD.updated_at AND NEW.tags IS NOT NULL THEN
           UPDATE ${t.tags} SET updated_at = NEW.updated_at WHERE session_id = NEW.id;
         END IF;
       END`,
      `CREATE TRIGGER ${t.tags}_at_delete AFTER DELETE ON ${t.sessions} FOR EACH ROW
        DELETE FROM ${t.tags} WHERE session_id = OLD.id`,
    ],
  ];
}

/**
 * The INSERT of a row of `tags` for each tag of the new session row (none when its tags are
 * null), at its updated_at: each key of the JSON object, and the value at that key (keys are
 * of A-Z a-z 0-9 _ . : -, which a quoted path member takes as they are). Frozen with step 11.
 */
function tagRowsOf(tags: string): string {
  const value = `JSON_UNQUOTE(JSON_EXTRACT(NEW.tags, CONCAT('$."', j.k, '"')))`;
  return `INSERT INTO ${tags} (session_id, k, value, updated_at)
          SELECT NEW.id, j.k, ${value}, NEW.updated_at
            FROM JSON_TABLE(JSON_KEYS(NEW.tags), '$[*]' COLUMNS (k VARCHAR(64) PATH '$')) AS j`;
}

/**
 * The trigger `<changes>_<name>`, which fires `when` and records in `changes` the change its
 * SELECT says (session, kind, seq). Frozen with step 10.
 */
function changeTrigger(changes: string, name: string, when: string, select: string): string {
  return `CREATE TRIGGER ${changes}_${name} ${when} FOR EACH ROW
    INSERT INTO ${changes} (session_id, kind, seq) SELECT ${select}`;
}

/**
 * The UPDATE that turns each encoded value of `column` (`ckpt1;<steps>;<owner>;<base64>`, held
 * as the bytes of that text) into `ckpt1b;<steps>;<owner>;<the bytes>`, exactly where
 * storedBytesOf would: a header of two fields of printable ASCII but `;` (read as latin1, one
 * character a byte, which both servers' REGEXP take), then a payload without `;` that is
 * canonical base64 (decoded and encoded again, it is the same text; TO_BASE64 breaks lines).
 * Any other value stays the bytes of its text, as storedBytesOf leaves it. MariaDB warns of a
 * payload that is not base64, which a strict sql_mode makes an error: the statement runs
 * without one there (MySQL's FROM_BASE64 gives NULL without a warning). Frozen with step 8.
 */
function encodedAsBytes(table: string, column: string): string {
  const header = `SUBSTRING_INDEX(${column}, ';', 3)`;
  const payload = `SUBSTRING(${column}, LENGTH(${header}) + 2)`;
  return `/*M! SET STATEMENT sql_mode = '' FOR */ UPDATE ${table}
     SET ${column} = CONCAT('ckpt1b;', SUBSTRING(${header}, 7), ';', FROM_BASE64(${payload}))
   WHERE ${column} LIKE 'ckpt1;%'
     AND LENGTH(${header}) < LENGTH(${column})
     AND CONVERT(${header} USING latin1) COLLATE latin1_bin REGEXP '^ckpt1;[ -:<-~]*;[ -:<-~]*$'
     AND LOCATE(';', ${payload}) = 0
     AND REPLACE(TO_BASE64(FROM_BASE64(${payload})), CHAR(10), '') = ${payload}`;
}
