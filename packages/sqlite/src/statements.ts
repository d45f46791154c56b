/**
 * Every statement the SQLite backend and KV store run, in one place and readable on its own.
 * The reads take named parameters (`:sessionId`) from an input object; the statements only the
 * mutations run, inside their transactions, are better-sqlite3's own, with `?` in order or
 * named parameters.
 */
import {
  type KeyValueStatements,
  keyValueSql,
  named,
  prepareEach,
  prepareKeyValue,
  type SqlReadsWithChanges,
  type TaggedShape,
} from '@ckpt/core/sql';
import type Database from 'better-sqlite3';
import { prepare, type SqliteStatement } from './runner.js';
import type { tables } from './schema.js';
import { taggedSessions } from './tagged-sessions.js';

type Tables = ReturnType<typeof tables>;

/**
 * `:fromSeq` (null: the head) and its ancestors in session `:sessionId`, newest first, at most
 * `:limit`, with `columns`.
 */
function chain(t: Tables, columns: string): string {
  // The walk carries each row's columns, so that nothing joins the checkpoints table again.
  return `
    WITH RECURSIVE chain (seq, parent, created_at, metadata, body, transcript, depth) AS (
      SELECT seq, parent, created_at, metadata, body, transcript, 1 FROM ${t.checkpoints}
       WHERE session_id = :sessionId
         AND seq = coalesce(:fromSeq, (SELECT head FROM ${t.sessions} WHERE id = :sessionId))
      UNION ALL
      SELECT c.seq, c.parent, c.created_at, c.metadata, c.body, c.transcript, chain.depth + 1
        FROM chain JOIN ${t.checkpoints} c ON c.session_id = :sessionId AND c.seq = chain.parent
       WHERE chain.depth < :limit
    )
    SELECT ${columns} FROM chain ORDER BY chain.depth`;
}

/**
 * A value column as its reads take it: an encoded value's bytes as a blob (made back into text
 * by `textFromStoredBytes`), and JSON text's bytes as text, which SQLite hands over without the
 * Buffer and decoding a blob would cost.
 */
function storedValue(column: string): string {
  return `CASE WHEN substr(${column}, 1, 7) = X'636B707431623B' THEN ${column} ELSE CAST(${column} AS TEXT) END`;
}

/** A checkpoint's pin, from its row of the pins table joined as `p` (absent: not pinned). */
const PINNED = 'p.seq IS NOT NULL AS pinned, p.note AS pin_note';

/** The reads every SQL backend has, in SQLite's SQL. */
function reads(t: Tables): Omit<SqlReadsWithChanges<string>, 'taggedSessions'> {
  return {
    changesPage: named(`
      SELECT c.id, c.session_id, c.kind, c.seq, b.last, b.trimmed
        FROM (SELECT (SELECT max(id) FROM ${t.changes}) AS last,
                     (SELECT CAST(value AS INTEGER) FROM ${t.meta}
                       WHERE key = 'changes_trimmed_through') AS trimmed) b
        LEFT JOIN (SELECT id, session_id, kind, seq FROM ${t.changes}
                    WHERE id > :after ORDER BY id LIMIT :limit) c ON 1
       ORDER BY c.id`),
    loadHead: named(`
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at,
             s.metadata, ${storedValue('b.data')} AS data, ${PINNED}
        FROM ${t.sessions} s JOIN ${t.bodies} b ON b.id = s.head_body
        LEFT JOIN ${t.pins} p ON p.session_id = s.id AND p.seq = s.head
       WHERE s.id = :sessionId`),
    loadSeq: named(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, ${storedValue('b.data')} AS data, ${PINNED}
        FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.id = c.body
        LEFT JOIN ${t.pins} p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE c.session_id = :sessionId AND c.seq = :seq`),
    loadByKey: named(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, ${storedValue('b.data')} AS data, ${PINNED}
        FROM ${t.idempotency} i
        JOIN ${t.checkpoints} c ON c.session_id = i.session_id AND c.seq = i.seq
        JOIN ${t.bodies} b ON b.id = c.body
        LEFT JOIN ${t.pins} p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE i.session_id = :sessionId AND i.key = :idempotencyKey`),
    session: named(`SELECT * FROM ${t.sessions} WHERE id = :sessionId`),
    listCheckpoints: named(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, ${PINNED} FROM ${t.checkpoints} c
        LEFT JOIN ${t.pins} p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE c.session_id = :sessionId AND c.seq < coalesce(:beforeSeq, 9007199254740992)
       ORDER BY c.seq DESC LIMIT :limit`),
    lineage: named(
      chain(
        t,
        `chain.seq, chain.parent, chain.created_at,
       CASE WHEN :transcript THEN coalesce((SELECT ${storedValue('items')} FROM ${t.transcripts} WHERE id = chain.transcript), '[]')
       END AS transcript`,
      ),
    ),
    exportCheckpoints: named(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, ${storedValue('b.data')} AS data, ${PINNED},
             coalesce((SELECT ${storedValue('items')} FROM ${t.transcripts} WHERE id = c.transcript), '[]') AS transcript,
             (SELECT json_group_array(needed) FROM ${t.needs} n
               WHERE n.session_id = c.session_id AND n.seq = c.seq) AS needs
        FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.id = c.body
        LEFT JOIN ${t.pins} p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE c.session_id = :sessionId AND c.seq > coalesce(:afterSeq, 0)
       ORDER BY c.seq LIMIT :limit`),
    stateScopes: named(`
      SELECT DISTINCT scope FROM ${t.state} WHERE scope > coalesce(:after, '') ORDER BY scope LIMIT :limit`),
    sessionsFirst: named(
      `SELECT * FROM ${t.sessions} ORDER BY updated_at DESC, id DESC LIMIT :limit`,
    ),
    sessionsAfter: named(`
      SELECT * FROM ${t.sessions} WHERE (updated_at, id) < (:updatedAt, :sessionId)
       ORDER BY updated_at DESC, id DESC LIMIT :limit`),
    // A range of the primary key, then a sort of that range: `+updated_at` keeps the planner
    // from walking the whole catalog in the order of sessions_by_update instead.
    prefixSessionsFirst: named(`
      SELECT * FROM ${t.sessions} WHERE id >= :prefix AND id < :bound
       ORDER BY +updated_at DESC, id DESC LIMIT :limit`),
    prefixSessionsAfter: named(`
      SELECT * FROM ${t.sessions} WHERE id >= :prefix AND id < :bound AND (updated_at, id) < (:updatedAt, :sessionId)
       ORDER BY +updated_at DESC, id DESC LIMIT :limit`),
  };
}

/** The mutations' statements that read one column, and give its values alone. */
export const PLUCKED = [
  'hasNeeds',
  'needsOf',
  'pruneRoots',
  'pruneGone',
  'pruneBatchEach',
  'isPinned',
] as const;

/**
 * The statements only the mutations run, inside their transactions, as better-sqlite3 takes
 * them (`?` in order, or `:name`); `chainRefs` as the reads are.
 */
export function mutations(t: Tables) {
  return {
    headOf: `SELECT head, last_seq FROM ${t.sessions} WHERE id = ?`,
    idempotent: `SELECT seq FROM ${t.idempotency} WHERE session_id = ? AND key = ?`,
    insertBody: `INSERT INTO ${t.bodies} (data) VALUES (?)`,
    insertTranscript: `INSERT INTO ${t.transcripts} (items) VALUES (?)`,
    insertCheckpoint: `
      INSERT INTO ${t.checkpoints} (session_id, seq, parent, created_at, metadata, body, transcript)
      VALUES (?, ?, ?, ?, ?, ?, ?)`,
    upsertSession: `
      INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, head_parent, head_created_at,
                                 head_body, metadata, created_at, updated_at)
      VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?)
      ON CONFLICT (id) DO UPDATE SET head = excluded.head, last_seq = excluded.last_seq,
        checkpoints = checkpoints + 1, head_parent = excluded.head_parent,
        head_created_at = excluded.head_created_at, head_body = excluded.head_body,
        metadata = excluded.metadata, updated_at = excluded.updated_at`,
    insertIdempotency: `INSERT INTO ${t.idempotency} (session_id, key, seq) VALUES (?, ?, ?)`,
    // Only the stored earlier checkpoints among those named (a JSON array).
    recordNeeds: `
      INSERT INTO ${t.needs} (session_id, seq, needed)
      SELECT :id, :seq, c.seq FROM ${t.checkpoints} c
       WHERE c.session_id = :id AND c.seq < :seq
         AND c.seq IN (SELECT value FROM json_each(:needs))`,
    insertNeed: `INSERT INTO ${t.needs} (session_id, seq, needed) VALUES (?, ?, ?)`,
    hasNeeds: `SELECT 1 FROM ${t.needs} WHERE session_id = ? LIMIT 1`,
    needsOf: `SELECT needed FROM ${t.needs} WHERE session_id = ? AND seq = ?`,
    copyNeeds: `
      INSERT INTO ${t.needs} (session_id, seq, needed)
      SELECT :newId, seq, needed FROM ${t.needs}
       WHERE session_id = :id AND seq IN (SELECT value FROM json_each(:copied))`,
    checkpointRow: `SELECT * FROM ${t.checkpoints} WHERE session_id = ? AND seq = ?`,
    chainRefs: named<{ sessionId: string; fromSeq: number; limit: number }>(
      chain(
        t,
        'chain.seq, chain.parent, chain.created_at, chain.metadata, chain.body, chain.transcript',
      ),
    ),
    moveHead: `
      UPDATE ${t.sessions} SET head = ?, head_parent = ?, head_created_at = ?, head_body = ?,
                               metadata = ?, updated_at = ?
       WHERE id = ?`,
    copyBody: `INSERT INTO ${t.bodies} (data) SELECT data FROM ${t.bodies} WHERE id = ?`,
    copyTranscript: `INSERT INTO ${t.transcripts} (items) SELECT items FROM ${t.transcripts} WHERE id = ?`,
    // The fork's tags are the source's.
    insertFork: `
      INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, forked_from_id, forked_from_seq,
                                 head_parent, head_created_at, head_body, metadata, created_at, updated_at,
                                 tags)
      VALUES (:newId, :at, :at, :count, :id, :at, :parent, :createdAt, :body, :metadata, :now, :now,
              (SELECT tags FROM ${t.sessions} WHERE id = :id))`,
    pruneThreshold: `SELECT seq FROM ${t.checkpoints} WHERE session_id = ? ORDER BY seq DESC LIMIT 1 OFFSET ?`,
    // Kept for their own sake: what the rule keeps (at or above :below, or created at or after
    // :before) and the pinned; the head comes on top.
    pruneRoots: `
      SELECT seq FROM ${t.checkpoints} WHERE session_id = :id AND (seq >= :below OR created_at >= :before)
      UNION SELECT seq FROM ${t.pins} WHERE session_id = :id`,
    // What the rule lets go, but the head, the pinned and what a kept one needs (a JSON array).
    pruneGone: `
      SELECT seq FROM ${t.checkpoints}
       WHERE session_id = :id AND seq < :below AND created_at < :before AND seq <> :head
         AND seq NOT IN (SELECT value FROM json_each(:needed))
         AND seq NOT IN (SELECT seq FROM ${t.pins} WHERE session_id = :id)`,
    // Prune removes bodies and transcripts first, while the rows naming them exist; :gone is a
    // JSON array of the seqs that go.
    pruneBodies: `
      DELETE FROM ${t.bodies} WHERE id IN (SELECT body FROM ${t.checkpoints}
       WHERE session_id = :id AND seq IN (SELECT value FROM json_each(:gone)))`,
    pruneTranscripts: `
      DELETE FROM ${t.transcripts} WHERE id IN (SELECT transcript FROM ${t.checkpoints}
       WHERE session_id = :id AND seq IN (SELECT value FROM json_each(:gone)))`,
    pruneCheckpoints: `
      DELETE FROM ${t.checkpoints} WHERE session_id = :id AND seq IN (SELECT value FROM json_each(:gone))`,
    pruneNeeds: `
      DELETE FROM ${t.needs} WHERE session_id = :id AND seq IN (SELECT value FROM json_each(:gone))`,
    countDown: `UPDATE ${t.sessions} SET checkpoints = checkpoints - ? WHERE id = ?`,
    // A batch of prunes (:ids, a JSON array): the sessions with pins or needs, each pruned as on
    // its own; for the others, every checkpoint that goes, found and removed a table at a time.
    pruneBatchEach: `
      SELECT s.id FROM ${t.sessions} s WHERE s.id IN (SELECT value FROM json_each(:ids))
         AND (s.pinned > 0 OR EXISTS (SELECT 1 FROM ${t.needs} n WHERE n.session_id = s.id))`,
    // What the rule lets go of the sessions without pins or needs (:skip null: no keepLast;
    // below is null, and nothing goes, in a session of fewer than keepLast checkpoints).
    pruneBatchGone: `
      WITH batch AS (
        SELECT s.id, s.head,
               CASE WHEN :skip IS NULL THEN :noBound ELSE (
                 SELECT seq FROM ${t.checkpoints} c WHERE c.session_id = s.id
                  ORDER BY seq DESC LIMIT 1 OFFSET :skip) END AS below
          FROM ${t.sessions} s
         WHERE s.id IN (SELECT value FROM json_each(:ids)) AND s.pinned = 0
           AND NOT EXISTS (SELECT 1 FROM ${t.needs} n WHERE n.session_id = s.id))
      SELECT c.session_id, c.seq, c.body, c.transcript
        FROM batch JOIN ${t.checkpoints} c ON c.session_id = batch.id
       WHERE c.seq < batch.below AND c.created_at < :before AND c.seq <> batch.head`,
    pruneBatchBodies: `DELETE FROM ${t.bodies} WHERE id IN (SELECT value FROM json_each(?))`,
    pruneBatchTranscripts: `DELETE FROM ${t.transcripts} WHERE id IN (SELECT value FROM json_each(?))`,
    // :gone is a JSON array of [session id, seq] pairs.
    pruneBatchCheckpoints: `
      DELETE FROM ${t.checkpoints} WHERE (session_id, seq) IN (
        SELECT json_extract(value, '$[0]'), json_extract(value, '$[1]') FROM json_each(?))`,
    isPinned: `SELECT 1 FROM ${t.pins} WHERE session_id = ? AND seq = ?`,
    insertPin: `INSERT INTO ${t.pins} (session_id, seq, note) VALUES (?, ?, ?)`,
    renotePin: `UPDATE ${t.pins} SET note = ? WHERE session_id = ? AND seq = ?`,
    deletePin: `DELETE FROM ${t.pins} WHERE session_id = ? AND seq = ?`,
    countPins: `UPDATE ${t.sessions} SET pinned = pinned + ? WHERE id = ?`,
    // Idle: written before the cutoff, and holding no pin.
    idleSession: `SELECT checkpoints FROM ${t.sessions} WHERE id = ? AND updated_at < ? AND pinned = 0`,
    idleBatch: `
      SELECT id, checkpoints FROM ${t.sessions} WHERE updated_at < ? AND pinned = 0
       ORDER BY updated_at, id LIMIT ?`,
    // A rewrite changes a checkpoint's body only while its data and transcript items are still
    // the values compared (`[]` for no items), then its items; in one transaction. A value is
    // held as bytes, or as text where a process of version 3 wrote it after the upgrade, and
    // SQLite never finds a blob equal to text: each is compared with both forms.
    rewriteBody: `
      UPDATE ${t.bodies} SET data = :toData
       WHERE id = (SELECT body FROM ${t.checkpoints} WHERE session_id = :sessionId AND seq = :seq)
         AND data IN (:fromData, :fromDataText)
         AND coalesce((SELECT x.items FROM ${t.checkpoints} c JOIN ${t.transcripts} x ON x.id = c.transcript
                        WHERE c.session_id = :sessionId AND c.seq = :seq), '[]')
             IN (:fromTranscript, :fromTranscriptText)`,
    rewriteTranscript: `
      UPDATE ${t.transcripts} SET items = :toTranscript
       WHERE id = (SELECT transcript FROM ${t.checkpoints} WHERE session_id = :sessionId AND seq = :seq)`,
    insertImported: `
      INSERT INTO ${t.sessions} (id, head, last_seq, checkpoints, forked_from_id, forked_from_seq,
                                 head_parent, head_created_at, head_body, metadata, created_at, updated_at,
                                 pinned, tags)
      VALUES (:id, :head, :last_seq, :checkpoints, :forked_from_id, :forked_from_seq, :head_parent,
              :head_created_at, :head_body, :metadata, :created_at, :updated_at, :pinned, :tags)`,
    // The session's tags (JSON text, null: none); the tags table follows by trigger (schema.ts).
    setTags: `UPDATE ${t.sessions} SET tags = ? WHERE id = ?`,
  };
}

/**
 * The statements that remove whole sessions, in the order they run (bodies and transcripts
 * first, while the rows naming them exist): of the session `?` names, and of a batch, whose ids
 * `?` gives as a JSON array.
 */
export function removals(t: Tables): { one: string[]; batch: string[] } {
  const of = (match: string) => [
    `DELETE FROM ${t.bodies} WHERE id IN (SELECT body FROM ${t.checkpoints} WHERE session_id ${match})`,
    `DELETE FROM ${t.transcripts}
      WHERE id IN (SELECT transcript FROM ${t.checkpoints} WHERE session_id ${match})`,
    ...[t.checkpoints, t.idempotency, t.needs, t.pins].map(
      (table) => `DELETE FROM ${table} WHERE session_id ${match}`,
    ),
    `DELETE FROM ${t.sessions} WHERE id ${match}`,
  ];
  return { one: of('= ?'), batch: of('IN (SELECT value FROM json_each(?))') };
}

/** The backend's reads and state statements, prepared on `db`; a tagged listing's when first asked for. */
export function backendStatements(db: Database.Database, t: Tables) {
  return {
    reads: {
      ...prepareEach(reads(t), (text) => prepare(db, text)),
      taggedSessions: (shape: TaggedShape) => {
        const { sql, args } = taggedSessions(t, shape);
        return { sql: prepare(db, sql), args };
      },
    },
    state: keyValueStatements(db, t.state, ['scope', 'key']),
  };
}

/** The statements of a key-value table (`keys`: its key columns), prepared on `db`. */
export function keyValueStatements(
  db: Database.Database,
  table: string,
  keys: readonly string[],
): KeyValueStatements<SqliteStatement> {
  return prepareKeyValue(keyValueSql({ table, keys, onConflict: 'ON CONFLICT' }), (text) =>
    prepare(db, text),
  );
}
