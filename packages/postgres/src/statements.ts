/**
 * Every statement the PostgreSQL backend and KV store send, in one place and readable on its
 * own, each beside the values it takes: named parameters (`:sessionId`) for an input object,
 * or `$n` with the function that lists the values. The pages that take optional bounds are
 * parsed on each call, so that each is planned for its values; every other statement is
 * prepared once per connection.
 */
import { type AppendResult, type ImportInput, storedBytesOf } from '@ckpt/core/adapter';
import {
  AGAIN,
  type AppendValues,
  type BatchOutcome,
  importedPins,
  importedSessionRow,
  type KeyValueStatements,
  keyValueSql,
  named,
  prepareKeyValue,
  type RewriteBytes,
  type RewriteValues,
  rewriteBytes,
  type SqlAppendBatch,
  type SqlProcedures,
  type SqlReads,
  type SqlStatement,
  type SqlWriteStatements,
  type TaggedQuery,
  type TaggedShape,
} from '@ckpt/core/sql';
import { type PostgresSql, prepared } from './runner.js';
import { schemaIdentifier } from './schema.js';

/** A statement parsed and planned on each call, for its values. */
const parsedEachCall = <In extends object>(text: string): SqlStatement<PostgresSql, In> =>
  named<In>(text);

/** A statement prepared once per connection (see `prepared`). */
function preparedOnce<In extends object>(text: string): SqlStatement<PostgresSql, In> {
  const { sql, args } = named<In>(text);
  return { sql: prepared(sql), args };
}

/** `In` with the texts named `K` as the bytes a value column holds (see storedBytesOf). */
type AsBytes<In, K extends keyof In> = Omit<In, K> & { [P in K]: Buffer };

/**
 * `statement`, handed the texts named by `columns` as the bytes the value columns hold: data,
 * transcript items and state values are bytea since schema version 7, each value as the bytes
 * storedBytesOf makes of the text core hands over.
 */
function holdingBytes<S, In extends object, K extends keyof In>(
  statement: SqlStatement<S, AsBytes<In, K>>,
  columns: readonly K[],
): SqlStatement<S, In> {
  return {
    sql: statement.sql,
    args: (input) => {
      const held = { ...input } as Record<PropertyKey, unknown>;
      for (const column of columns) held[column] = storedBytesOf(input[column] as string);
      return statement.args(held as AsBytes<In, K>);
    },
  };
}

/** The values of an append that go to value columns. */
const APPEND_BYTES = ['data', 'transcript'] as const;
type AppendBytes = AsBytes<AppendValues, (typeof APPEND_BYTES)[number]>;

/**
 * The text of value column `column` (bytea), made on the server by value_text (stored-code.ts):
 * what core was handed, sent as text, where the bytes would travel as hex at twice their size.
 */
const valueText = (ns: string, column: string) => `${ns}.value_text(${column})`;

/**
 * A checkpoint's data as text, from its body, as column `data`: a subquery, not a join, so that
 * a cached generic plan can only look the body up by its whole key (see loadHead).
 */
const bodyText = (ns: string, sessionId: string, seq: string) =>
  `(SELECT ${valueText(ns, 'b.data')} FROM ${ns}.bodies b WHERE b.session_id = ${sessionId} AND b.seq = ${seq}) AS data`;

/** A checkpoint's pin, from its row of the pins table joined as `p` (absent: not pinned). */
const PINNED = 'p.seq IS NOT NULL AS pinned, p.note AS pin_note';

const SESSION_COLUMNS =
  'id, head, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at, tags';

/** The reads of schema `ns` (quoted). */
function reads(ns: string): SqlReads<PostgresSql> {
  return {
    // A load is one SELECT, so it reads the head and its checkpoint from one snapshot. The body
    // is a subquery, not a join: once the tables have statistics, the cached generic plan of
    // the join looks the body up by session alone (one row a session, it guesses) and filters
    // the seq, reading every body of a session with thousands; the subquery can only look it
    // up by its whole key.
    loadHead: preparedOnce(`
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at, s.metadata,
             ${bodyText(ns, 's.id', 's.head')},
             ${PINNED}
        FROM ${ns}.sessions s
        LEFT JOIN ${ns}.pins p ON p.session_id = s.id AND p.seq = s.head
       WHERE s.id = :sessionId`),
    loadSeq: preparedOnce(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, ${bodyText(ns, 'c.session_id', 'c.seq')}, ${PINNED}
        FROM ${ns}.checkpoints c
        LEFT JOIN ${ns}.pins p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE c.session_id = :sessionId AND c.seq = :seq`),
    loadByKey: preparedOnce(`
      SELECT c.seq, c.parent, c.created_at, c.metadata,
             ${bodyText(ns, 'c.session_id', 'c.seq')},
             ${PINNED}
        FROM ${ns}.idempotency i
        JOIN ${ns}.checkpoints c ON c.session_id = i.session_id AND c.seq = i.seq
        LEFT JOIN ${ns}.pins p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE i.session_id = :sessionId AND i.key = :idempotencyKey`),
    session: preparedOnce(`SELECT ${SESSION_COLUMNS} FROM ${ns}.sessions WHERE id = :sessionId`),
    listCheckpoints: parsedEachCall(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, ${PINNED} FROM ${ns}.checkpoints c
        LEFT JOIN ${ns}.pins p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE c.session_id = :sessionId AND (:beforeSeq::bigint IS NULL OR c.seq < :beforeSeq)
       ORDER BY c.seq DESC LIMIT :limit`),
    // The transcript items made text here, in a statement planned once, rather than in the
    // function, whose queries PL/pgSQL may plan again on a call, inlining value_text each time.
    lineage: preparedOnce(`
      SELECT l.seq, l.parent, l.created_at, ${valueText(ns, 'l.transcript')} AS transcript
        FROM ${ns}.lineage(:sessionId, :fromSeq, :limit, :transcript) l`),
    sessionsFirst: preparedOnce(
      `SELECT ${SESSION_COLUMNS} FROM ${ns}.sessions ORDER BY updated_at DESC, id DESC LIMIT :limit`,
    ),
    sessionsAfter: parsedEachCall(`
      SELECT ${SESSION_COLUMNS} FROM ${ns}.sessions WHERE (updated_at, id) < (:updatedAt, :sessionId)
       ORDER BY updated_at DESC, id DESC LIMIT :limit`),
    // A range of the primary key (ids are COLLATE "C", so the range is in byte order), then a
    // sort of that range; planned for the prefix given, so that a prefix that matches most of
    // the catalog walks sessions_by_update instead.
    prefixSessionsFirst: parsedEachCall(`
      SELECT ${SESSION_COLUMNS} FROM ${ns}.sessions WHERE id >= :prefix AND id < :bound
       ORDER BY updated_at DESC, id DESC LIMIT :limit`),
    prefixSessionsAfter: parsedEachCall(`
      SELECT ${SESSION_COLUMNS} FROM ${ns}.sessions
       WHERE id >= :prefix AND id < :bound AND (updated_at, id) < (:updatedAt, :sessionId)
       ORDER BY updated_at DESC, id DESC LIMIT :limit`),
    exportCheckpoints: preparedOnce(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, ${valueText(ns, 'b.data')} AS data,
             coalesce(${valueText(ns, 'x.items')}, '[]') AS transcript,
             (SELECT json_agg(n.needed ORDER BY n.needed) FROM ${ns}.needs n
               WHERE n.session_id = c.session_id AND n.seq = c.seq)::text AS needs,
             ${PINNED}
        FROM ${ns}.checkpoints c
        JOIN ${ns}.bodies b ON b.session_id = c.session_id AND b.seq = c.seq
        LEFT JOIN ${ns}.transcripts x ON x.session_id = c.session_id AND x.seq = c.seq
        LEFT JOIN ${ns}.pins p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE c.session_id = :sessionId AND c.seq > coalesce(:afterSeq::bigint, 0)
       ORDER BY c.seq LIMIT :limit`),
    stateScopes: preparedOnce(`
      SELECT DISTINCT scope FROM ${ns}.state WHERE scope > coalesce(:after::text, '')
       ORDER BY scope LIMIT :limit`),
    taggedSessions: (shape) => taggedSessions(ns, shape),
  };
}

/**
 * A page of the sessions that have every pair of `where`, for queries of `shape`: a walk of
 * tags_by_update down the first pair's entries, in the catalog's order (updated_at, then id,
 * descending), from the position given on (keyset, an index condition) and within the prefix's
 * range of ids (an index condition too, the ids being in the index); each session found is
 * checked for the other pairs in its own rows of the primary key, and read from the sessions
 * table by its id. So a page reads the entries of the first pair down to its last match, never
 * every match: its cost follows the page, not the store.
 *
 * The other pairs are one EXISTS that counts them (each pair is at most one row, the key being
 * part of the primary key): the aggregate keeps it a check of each session the walk finds. A
 * plain EXISTS for each pair the planner turns into joins, and then, since tags go together
 * (the sessions of a tenant share its users), it expects few matches, and finds them all to
 * sort them. Planned on each call, for the values given: how many sessions have the first pair
 * decides between the walk and, for a pair only a page or so of sessions have, reading them all
 * and sorting them, which is then cheaper.
 */
function taggedSessions(ns: string, shape: TaggedShape): SqlStatement<PostgresSql, TaggedQuery> {
  const others = Array.from(
    { length: shape.pairs - 1 },
    // `IS TRUE` keeps the value from the index by tag: with it, a table without statistics
    // yet (just filled, not analyzed) had each check walk every entry of its pair.
    (_, i) => `(o.key = :key${i + 1} AND (o.value = :value${i + 1}) IS TRUE)`,
  );
  const { sql, args } = parsedEachCall<Record<string, unknown>>(`
    SELECT ${SESSION_COLUMNS.split(', ')
      .map((column) => `s.${column}`)
      .join(', ')}
      FROM ${ns}.tags t
      JOIN ${ns}.sessions s ON s.id = t.session_id
     WHERE t.key = :key0 AND t.value = :value0
       ${shape.prefix ? 'AND t.session_id >= :prefix AND t.session_id < :bound' : ''}
       ${shape.after ? 'AND (t.updated_at, t.session_id) < (:updatedAt, :sessionId)' : ''}
       ${
         others.length === 0
           ? ''
           : `AND EXISTS (SELECT FROM ${ns}.tags o WHERE o.session_id = t.session_id
                             AND (${others.join(' OR ')})
                          HAVING count(*) = ${others.length})`
       }
     ORDER BY t.updated_at DESC, t.session_id DESC
     LIMIT :limit`);
  return {
    sql,
    args: (query) =>
      args({
        ...Object.fromEntries(
          query.where.flatMap(([key, value], i) => [
            [`key${i}`, key],
            [`value${i}`, value],
          ]),
        ),
        prefix: query.prefix,
        bound: query.bound,
        updatedAt: query.after?.updatedAt,
        sessionId: query.after?.sessionId,
        limit: query.limit,
      }),
  };
}

/** The mutations, each one call of a function the migration created (see stored-code.ts). */
function procedures(ns: string): SqlProcedures<PostgresSql> {
  return {
    append: holdingBytes(
      preparedOnce<AppendBytes>(`
        SELECT * FROM ${ns}.append(:sessionId, :data, :metadata, :transcript, :checkHead,
                                   :expectedHead, :idempotencyKey, :now, :needs, :setTags, :tags)`),
      APPEND_BYTES,
    ),
    rollback: preparedOnce(
      `SELECT * FROM ${ns}.rollback(:sessionId, :seq, :checkHead, :expectedHead, :now)`,
    ),
    fork: preparedOnce(`SELECT * FROM ${ns}.fork(:sessionId, :atSeq, :newId, :now)`),
    prune: preparedOnce(
      `SELECT ${ns}.prune(:sessionId, :keepLast, :createdBefore, :dryRun) AS removed`,
    ),
    delete: preparedOnce(`SELECT ${ns}.delete_session(:sessionId) AS deleted`),
    pin: preparedOnce(`SELECT ${ns}.pin(:sessionId, :seq, :note) AS status`),
    unpin: preparedOnce(`SELECT ${ns}.unpin(:sessionId, :seq) AS unpinned`),
    deleteIdle: preparedOnce(
      `SELECT ${ns}.delete_idle(:sessionId, :idleBefore, :dryRun) AS checkpoints`,
    ),
    deleteIdleBatch: deleteIdleBatch(ns),
    // In the order of the ids, so that two batches lock the sessions they share in one order.
    pruneBatch: preparedOnce(`
      SELECT sum(${ns}.prune(batch.id, :keepLast, :createdBefore, :dryRun)) AS removed
        FROM (SELECT DISTINCT unnest(:sessionIds::text[]) AS id ORDER BY 1) AS batch`),
    // The row's column alone; its trigger puts the tag rows in step (schema step 9). It leaves
    // updated_at, and no column the change log's trigger looks at, as it was.
    setTags: preparedOnce(`
      WITH tagged AS (
        UPDATE ${ns}.sessions s SET tags = :tags::text WHERE s.id = :sessionId RETURNING s.id
      )
      SELECT count(*) AS done FROM tagged`),
  };
}

/**
 * Up to `limit` idle sessions, whole, as one statement: the oldest sessions written before
 * `idleBefore` that hold no pin are locked, then deleted with every row they own. Both
 * conditions are columns of the session row, so a writer that changed a row after the statement
 * began (an append moves updated_at, a pin counts up) makes the server check them again on the
 * row's newest version, and skip it. A writer that comes after waits for the lock, then finds
 * no session and starts a new one.
 */
function deleteIdleBatch(
  ns: string,
): SqlStatement<PostgresSql, { idleBefore: number; limit: number }> {
  return preparedOnce(`
    WITH idle AS (
      SELECT s.id FROM ${ns}.sessions s
       WHERE s.updated_at < :idleBefore AND s.pinned = 0
       ORDER BY s.updated_at, s.id LIMIT :limit
         FOR UPDATE
    ), gone AS (
      DELETE FROM ${ns}.sessions s USING idle
       WHERE s.id = idle.id AND s.updated_at < :idleBefore AND s.pinned = 0
      RETURNING s.id, s.checkpoints
    ), checkpoints AS (
      DELETE FROM ${ns}.checkpoints c USING gone WHERE c.session_id = gone.id
    ), bodies AS (
      DELETE FROM ${ns}.bodies b USING gone WHERE b.session_id = gone.id
    ), transcripts AS (
      DELETE FROM ${ns}.transcripts x USING gone WHERE x.session_id = gone.id
    ), keys AS (
      DELETE FROM ${ns}.idempotency i USING gone WHERE i.session_id = gone.id
    ), needs AS (
      DELETE FROM ${ns}.needs n USING gone WHERE n.session_id = gone.id
    )
    SELECT count(*) AS sessions, sum(checkpoints) AS checkpoints FROM gone`);
}

/**
 * A checkpoint without an idempotency key as one statement, instead of a call of the `append`
 * function, whose PL/pgSQL costs a good part of a call on top of the same writes. The
 * statement writes only where it can go straight through: the session exists and its head is
 * as expected, or the session is new and nobody creates it at the same moment. Anywhere else
 * it writes nothing and returns no row, and `append` (a second statement) decides what
 * happened. It writes nothing when given a key, since a keyed checkpoint must record its key,
 * which only `append` does, nor when given needs: one statement reads all its tables as of its
 * start, and a prune that held the session's row until then may have removed a needed
 * checkpoint it still sees; `append` reads them after the row lock. Tags it sets as `append`
 * does, in the session's row, whose triggers index them (core sends a checkpoint with tags to
 * `append` at once, but nothing here depends on that).
 */
function appendDirect(ns: string): SqlStatement<PostgresSql, AppendValues> {
  const statement = preparedOnce<AppendBytes>(`
    WITH moved AS (
      UPDATE ${ns}.sessions s
         SET head_parent = s.head, head = s.last_seq + 1, last_seq = s.last_seq + 1,
             checkpoints = s.checkpoints + 1, metadata = :metadata, updated_at = :now,
             head_created_at = :now, tags = CASE WHEN :setTags THEN :tags::text ELSE s.tags END
       WHERE s.id = :sessionId AND (NOT :checkHead OR s.head IS NOT DISTINCT FROM :expectedHead::bigint)
         AND :idempotencyKey::text IS NULL AND :needs::text = '[]'
      RETURNING s.head AS seq, s.head_parent AS parent
    ), created AS (
      INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata,
                                       created_at, updated_at, head_created_at, tags)
      SELECT :sessionId, 1, NULL, 1, 1, :metadata, :now, :now, :now,
             CASE WHEN :setTags THEN :tags::text END
       WHERE NOT EXISTS (SELECT FROM moved) AND (NOT :checkHead OR :expectedHead::bigint IS NULL)
         AND :idempotencyKey::text IS NULL AND :needs::text = '[]'
      ON CONFLICT (id) DO NOTHING
      RETURNING s.head AS seq, s.head_parent AS parent
    ), written AS (
      SELECT seq, parent FROM moved UNION ALL SELECT seq, parent FROM created
    ), checkpoint AS (
      INSERT INTO ${ns}.checkpoints (session_id, seq, parent, created_at, metadata)
      SELECT :sessionId, seq, parent, :now, :metadata FROM written
    ), body AS (
      INSERT INTO ${ns}.bodies (session_id, seq, data) SELECT :sessionId, seq, :data::bytea FROM written
    ), transcript AS (
      INSERT INTO ${ns}.transcripts (session_id, seq, items)
      SELECT :sessionId, seq, :transcript::bytea FROM written WHERE :transcript::bytea <> '[]'
    )
    SELECT 'written' AS status, seq, parent FROM written`);
  return holdingBytes(statement, APPEND_BYTES);
}

/** One checkpoint's values as a row of `appendSet`'s input, with their types. */
const APPEND_ROW = holdingBytes(
  named<AppendBytes>(
    '(:sessionId::text, :data::bytea, :metadata::text, :transcript::bytea, :checkHead::boolean, :expectedHead::bigint, :idempotencyKey::text, :now::bigint, :needs::text, :setTags::boolean, :tags::text)',
  ),
  APPEND_BYTES,
);
const APPEND_ROW_VALUES = APPEND_ROW.sql.match(/\$\d+/g)!.length;

/**
 * `n` checkpoints that waited for a connection, each on a session of its own, as one statement:
 * `appendDirect` over a `VALUES` list of APPEND_ROWs (row i's values are the i-th run of
 * parameters), each value sent as a parameter of its own, so that no payload is escaped into
 * an array literal for the server to parse back. Calls with needs are never among them (see
 * appendDirect): they go alone. Calls with tags are, and set them as appendDirect does. Like it, it writes only the calls that can go straight
 * through, and returns a row for each of those; a call that gets none (a conflict, a replayed
 * key, a session created meanwhile) goes alone afterwards, through `append`. A keyed call goes
 * straight through when its key is not recorded yet; two with the same key at once meet at the
 * key's primary key, which fails the whole statement, and then every call goes alone.
 */
function appendSet(ns: string, n: number): SqlStatement<PostgresSql, AppendValues[]> {
  const rows = Array.from({ length: n }, (_, i) =>
    APPEND_ROW.sql.replace(/\$(\d+)/g, (_, k: string) => `$${APPEND_ROW_VALUES * i + Number(k)}`),
  );
  const sql = prepared(`
    WITH input (id, data, metadata, transcript, check_head, expected, key, now, needs, set_tags, tags) AS (
      VALUES ${rows.join(',\n             ')}
    ), moved AS (
      UPDATE ${ns}.sessions s
         SET head_parent = s.head, head = s.last_seq + 1, last_seq = s.last_seq + 1,
             checkpoints = s.checkpoints + 1, metadata = i.metadata, updated_at = i.now,
             head_created_at = i.now, tags = CASE WHEN i.set_tags THEN i.tags ELSE s.tags END
        FROM input i
       WHERE s.id = i.id AND (NOT i.check_head OR s.head IS NOT DISTINCT FROM i.expected)
         AND NOT EXISTS (SELECT FROM ${ns}.idempotency k WHERE k.session_id = i.id AND k.key = i.key)
      RETURNING s.id, s.head AS seq, s.head_parent AS parent
    ), created AS (
      INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata,
                                       created_at, updated_at, head_created_at, tags)
      SELECT i.id, 1, NULL, 1, 1, i.metadata, i.now, i.now, i.now,
             CASE WHEN i.set_tags THEN i.tags END FROM input i
       WHERE NOT EXISTS (SELECT FROM moved m WHERE m.id = i.id)
         AND (NOT i.check_head OR i.expected IS NULL)
      ON CONFLICT (id) DO NOTHING
      RETURNING s.id, s.head AS seq, s.head_parent AS parent
    ), written AS (
      SELECT w.id, w.seq, w.parent, i.data, i.metadata, i.transcript, i.key, i.now
        FROM (SELECT * FROM moved UNION ALL SELECT * FROM created) w JOIN input i ON i.id = w.id
    ), checkpoint AS (
      INSERT INTO ${ns}.checkpoints (session_id, seq, parent, created_at, metadata)
      SELECT id, seq, parent, now, metadata FROM written
    ), body AS (
      INSERT INTO ${ns}.bodies (session_id, seq, data) SELECT id, seq, data FROM written
    ), transcript AS (
      INSERT INTO ${ns}.transcripts (session_id, seq, items)
      SELECT id, seq, transcript FROM written WHERE transcript <> '[]'
    ), idempotency AS (
      INSERT INTO ${ns}.idempotency (session_id, key, seq)
      SELECT id, key, seq FROM written WHERE key IS NOT NULL
    )
    SELECT id, seq, parent FROM written`);
  return { sql, args: (calls) => calls.flatMap(APPEND_ROW.args) };
}

/**
 * A whole session as one statement: its row first, with its tags, where the id is free (`ON
 * CONFLICT DO NOTHING`), then the rows of its checkpoints, bodies, transcript items and needs from arrays,
 * each only where the session's row went in. One round trip, one transaction, whatever the
 * number of checkpoints; `imported` is 0 when the id was taken. Its values are listed by
 * `args` below, in order.
 */
function importNew(ns: string): SqlStatement<PostgresSql, ImportInput> {
  const sql = prepared(`
    WITH s AS (
      INSERT INTO ${ns}.sessions (id, head, head_parent, last_seq, checkpoints, forked_from_id,
                                  forked_from_seq, metadata, created_at, updated_at, head_created_at,
                                  pinned, tags)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11, $20, $23)
      ON CONFLICT (id) DO NOTHING
      RETURNING id
    ), checkpoint AS (
      INSERT INTO ${ns}.checkpoints (session_id, seq, parent, created_at, metadata)
      SELECT s.id, u.* FROM s, unnest($12::bigint[], $13::bigint[], $14::bigint[], $15::text[]) AS u
    ), body AS (
      INSERT INTO ${ns}.bodies (session_id, seq, data)
      SELECT s.id, u.* FROM s, unnest($12::bigint[], $16::bytea[]) AS u
    ), transcript AS (
      INSERT INTO ${ns}.transcripts (session_id, seq, items)
      SELECT s.id, u.seq, u.items FROM s, unnest($12::bigint[], $17::bytea[]) AS u(seq, items)
       WHERE u.items <> '[]'
    ), needs AS (
      INSERT INTO ${ns}.needs (session_id, seq, needed)
      SELECT s.id, u.* FROM s, unnest($18::bigint[], $19::bigint[]) AS u
    ), pins AS (
      INSERT INTO ${ns}.pins (session_id, seq, note)
      SELECT s.id, u.* FROM s, unnest($21::bigint[], $22::text[]) AS u
    )
    SELECT count(*)::int AS imported FROM s`);
  const args = (input: ImportInput): unknown[] => {
    const cps = input.checkpoints;
    const row = importedSessionRow(input);
    const pins = importedPins(input);
    return [
      // $1 to $11: the session's row
      row.id,
      row.head,
      row.head_parent,
      row.last_seq,
      row.checkpoints,
      row.forked_from_id,
      row.forked_from_seq,
      row.metadata,
      row.created_at,
      row.updated_at,
      row.head_created_at,
      // $12 to $17: a column each of the checkpoints' rows
      cps.map((cp) => cp.seq),
      cps.map((cp) => cp.parent),
      cps.map((cp) => cp.createdAt),
      cps.map((cp) => cp.metadata),
      cps.map((cp) => storedBytesOf(cp.data)),
      cps.map((cp) => storedBytesOf(cp.transcript)),
      // $18, $19: one entry per need, the seq that needs and the seq it needs
      cps.flatMap((cp) => cp.needs.map(() => cp.seq)),
      cps.flatMap((cp) => cp.needs),
      // $20: how many are pinned; $21, $22: one entry per pin, its seq and note
      row.pinned,
      pins.map((pin) => pin.seq),
      pins.map((pin) => pin.note),
      // $23: its tags, which the session row's trigger indexes
      row.tags,
    ];
  };
  return { sql, args };
}

/**
 * The statements of a key-value table (`keys`: its key columns), the state table or the KV
 * table: prepared, but for the page, whose plan depends on its bounds. `bytes`: the value column
 * is bytea, read as the text `readText` makes of it on the server.
 */
function keyValueStatements(
  table: string,
  keys: readonly string[],
  bytes?: { readText: (column: string) => string },
): KeyValueStatements<PostgresSql> {
  const sql = keyValueSql({
    table,
    keys,
    onConflict: 'ON CONFLICT',
    nullable: (n) => `$${n}::text`,
    ...(bytes && { readValue: bytes.readText, textHeld: (n: number) => textHeld(`$${n}`) }),
  });
  return { ...prepareKeyValue<PostgresSql>(sql, prepared), keys: sql.keys };
}

/** Parameter `param`, a value's text, as the bytes a process of version 6 writes for it: its UTF-8. */
const textHeld = (param: string) => `convert_to(${param}::text, 'UTF8')`;

/**
 * A checkpoint's data and transcript items replaced while they still hold the values compared:
 * one statement, so both change or neither. A row back when rewritten. The body's row is locked
 * first, so a second rewrite or a removal waits for it and then compares again. Each value is
 * compared in both forms a row may hold it in (see RewriteBytes): the bytes storedBytesOf
 * makes, which every row written since version 7 holds, rows the upgrade converted included;
 * and the UTF-8 of its text, which a process of version 6 still running writes after the
 * upgrade (the server takes the text it sends for a bytea as those bytes).
 */
function rewrite(ns: string): SqlStatement<PostgresSql, RewriteValues> {
  const { sql, args } = preparedOnce<RewriteBytes>(`
    WITH body AS (
      UPDATE ${ns}.bodies SET data = :toData::bytea
       WHERE session_id = :sessionId AND seq = :seq
         AND data IN (:fromData::bytea, ${textHeld(':fromDataText')})
         AND coalesce((SELECT x.items FROM ${ns}.transcripts x
                        WHERE x.session_id = :sessionId AND x.seq = :seq), '[]')
             IN (:fromTranscript::bytea, ${textHeld(':fromTranscriptText')})
      RETURNING seq
    ), items AS (
      UPDATE ${ns}.transcripts SET items = :toTranscript::bytea
       WHERE session_id = :sessionId AND seq = (SELECT seq FROM body)
      RETURNING seq
    )
    SELECT seq FROM body`);
  return { sql, args: (values) => args(rewriteBytes(values)) };
}

/**
 * Group commit: the first checkpoint of each session without needs (see appendDirect) of those
 * that waited, through appendSet; every other one goes alone afterwards, as does each the
 * statement did not write (it returns rows only for those it wrote).
 */
function appendBatch(ns: string): SqlAppendBatch<PostgresSql> {
  /** The statements that append n checkpoints at once, by n. */
  const sets = new Map<number, SqlStatement<PostgresSql, AppendValues[]>>();
  return {
    carries(inputs) {
      const first = new Map<string, number>();
      for (const [i, input] of inputs.entries()) {
        if (input.needs.length === 0 && !first.has(input.sessionId)) first.set(input.sessionId, i);
      }
      return [...first.values()];
    },
    statement(n) {
      let statement = sets.get(n);
      if (statement === undefined) {
        statement = appendSet(ns, n);
        sets.set(n, statement);
      }
      return statement;
    },
    outcomes(rows, carried) {
      const outcomes: BatchOutcome<AppendResult>[] = carried.map(() => AGAIN);
      const at = new Map(carried.map((values, n) => [values.sessionId, n]));
      for (const row of rows as { id: string; seq: number; parent: number | null }[]) {
        outcomes[at.get(row.id)!] = {
          value: { status: 'written', seq: row.seq, parent: row.parent },
        };
      }
      return outcomes;
    },
  };
}

/** The backend's statements in schema `namespace`. */
export function backendStatements(namespace: string) {
  const ns = schemaIdentifier(namespace);
  return {
    reads: reads(ns),
    writes: {
      ...procedures(ns),
      appendDirect: appendDirect(ns),
      appendBatch: appendBatch(ns),
      importing: {
        whereFree: importNew(ns),
        removeSession: named<{ sessionId: string }>(`SELECT ${ns}.delete_session(:sessionId)`),
      },
      rewrite: rewrite(ns),
    } satisfies SqlWriteStatements<PostgresSql>,
    state: keyValueStatements(`${ns}.state`, ['scope', 'key'], {
      readText: (column) => valueText(ns, column),
    }),
  };
}

/** The KV store's statements in schema `namespace`. */
export function kvStatements(namespace: string): KeyValueStatements<PostgresSql> {
  return keyValueStatements(`${schemaIdentifier(namespace)}.kv`, ['key']);
}
