/**
 * Every statement the MySQL / MariaDB backend and KV store send, in one place and readable on
 * its own, each beside the values it takes: named parameters (`:sessionId`) for an input
 * object, or the function that lists the values. Each is sent with `?` placeholders (see
 * runner.ts).
 */
import { type AppendInput, errorCode, storedBytesOf } from '@ckpt/core/adapter';
import {
  AGAIN,
  type AppendValues,
  type BatchAppendRow,
  batchAppendOutcomeFromRow,
  type KeyValueStatements,
  keyValueSql,
  named,
  prepareEach,
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
import { type MysqlStatement, statement } from './runner.js';
import { tables } from './schema.js';

/** A checkpoint's pin, from its row of the pins table joined as `p` (absent: not pinned). */
const PINNED = 'p.seq IS NOT NULL AS pinned, p.note AS pin_note';

const SESSION_COLUMNS =
  'id, head, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at, tags';

/** The reads of namespace `ns`. */
function reads(ns: string): SqlReads<MysqlStatement> {
  const t = tables(ns);
  const texts: Omit<SqlReads<string>, 'taggedSessions'> = {
    // A load is one SELECT, so it reads the head and its checkpoint from one snapshot.
    loadHead: named(`
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at, s.metadata, b.data,
             ${PINNED}
        FROM ${t.sessions} s JOIN ${t.bodies} b ON b.session_id = s.id AND b.seq = s.head
        LEFT JOIN ${t.pins} p ON p.session_id = s.id AND p.seq = s.head
       WHERE s.id = :sessionId`),
    loadSeq: named(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data, ${PINNED}
        FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
        LEFT JOIN ${t.pins} p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE c.session_id = :sessionId AND c.seq = :seq`),
    loadByKey: named(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data, ${PINNED}
        FROM ${t.idempotency} i
        JOIN ${t.checkpoints} c ON c.session_id = i.session_id AND c.seq = i.seq
        JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
        LEFT JOIN ${t.pins} p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE i.session_id = :sessionId AND i.k = :idempotencyKey`),
    session: named(`SELECT ${SESSION_COLUMNS} FROM ${t.sessions} WHERE id = :sessionId`),
    listCheckpoints: named(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, ${PINNED} FROM ${t.checkpoints} c
        LEFT JOIN ${t.pins} p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE c.session_id = :sessionId AND (:beforeSeq IS NULL OR c.seq < :beforeSeq)
       ORDER BY c.seq DESC LIMIT :limit`),
    // Both servers stop a recursive query after 1,000 steps by default (MariaDB silently, with
    // a partial result), far fewer than a long session's history: each raises it for this
    // statement alone, MariaDB through its executable comment, MySQL 8 through a hint, and
    // each ignores the other's.
    lineage: named(`/*M! SET STATEMENT max_recursive_iterations = 4294967295 FOR */
      WITH RECURSIVE chain (seq, parent, created_at, depth) AS (
        SELECT c.seq, c.parent, c.created_at, 1 FROM ${t.checkpoints} c
         WHERE c.session_id = :sessionId
           AND c.seq = COALESCE(:fromSeq, (SELECT head FROM ${t.sessions} WHERE id = :sessionId))
        UNION ALL
        SELECT c.seq, c.parent, c.created_at, chain.depth + 1
          FROM chain JOIN ${t.checkpoints} c ON c.session_id = :sessionId AND c.seq = chain.parent
         WHERE chain.depth < :limit
      )
      SELECT /*+ SET_VAR(cte_max_recursion_depth = 4294967295) */ chain.seq, chain.parent, chain.created_at,
             CASE WHEN :transcript THEN COALESCE((SELECT x.items FROM ${t.transcripts} x
                                          WHERE x.session_id = :sessionId AND x.seq = chain.seq), '[]') END AS transcript
        FROM chain ORDER BY chain.depth`),
    sessionsFirst: named(
      `SELECT ${SESSION_COLUMNS} FROM ${t.sessions} ORDER BY updated_at DESC, id DESC LIMIT :limit`,
    ),
    sessionsAfter: named(`
      SELECT ${SESSION_COLUMNS} FROM ${t.sessions}
       WHERE updated_at < :updatedAt OR (updated_at = :updatedAt AND id < :sessionId)
       ORDER BY updated_at DESC, id DESC LIMIT :limit`),
    // A range of the primary key (ids are VARBINARY, so the range is in byte order), then a
    // sort of that range.
    prefixSessionsFirst: named(`
      SELECT ${SESSION_COLUMNS} FROM ${t.sessions} WHERE id >= :prefix AND id < :bound
       ORDER BY updated_at DESC, id DESC LIMIT :limit`),
    prefixSessionsAfter: named(`
      SELECT ${SESSION_COLUMNS} FROM ${t.sessions}
       WHERE id >= :prefix AND id < :bound
         AND (updated_at < :updatedAt OR (updated_at = :updatedAt AND id < :sessionId))
       ORDER BY updated_at DESC, id DESC LIMIT :limit`),
    exportCheckpoints: named(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data, COALESCE(x.items, '[]') AS transcript,
             (SELECT CAST(JSON_ARRAYAGG(n.needed) AS CHAR) FROM ${t.needs} n
               WHERE n.session_id = c.session_id AND n.seq = c.seq) AS needs,
             ${PINNED}
        FROM ${t.checkpoints} c
        JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
        LEFT JOIN ${t.transcripts} x ON x.session_id = c.session_id AND x.seq = c.seq
        LEFT JOIN ${t.pins} p ON p.session_id = c.session_id AND p.seq = c.seq
       WHERE c.session_id = :sessionId AND c.seq > COALESCE(:afterSeq, 0)
       ORDER BY c.seq LIMIT :limit`),
    stateScopes: named(`
      SELECT DISTINCT scope FROM ${t.state} WHERE scope > COALESCE(:after, '')
       ORDER BY scope LIMIT :limit`),
  };
  return { ...prepareEach(texts, statement), taggedSessions: taggedSessions(ns) };
}

/**
 * A page of the sessions that have every tag of a query of `shape`: a walk of the first pair's
 * rows of the tags index (by_tag), which come in the catalog's order (updated_at, then id, both
 * descending, as bytes), from the position after which the page starts; each row checked for
 * the prefix (a range of ids) and joined to the row of each other pair (by the table's primary
 * key, one row or none) and to its session. The pairs come in the caller's order, the rarest
 * first as core asks. The join order is fixed (STRAIGHT_JOIN): the optimizer, left to weigh
 * the pairs' rows as a semi-join, can start from another pair and sort all its matches. The
 * walk stops at the page's end, so a page reads the rows of the sessions it lists and of those
 * with the first pair that it passes over, however many sessions the store holds. Keys and
 * values are sent as their bytes, as the columns hold them.
 */
function taggedSessions(
  ns: string,
): (shape: TaggedShape) => SqlStatement<MysqlStatement, TaggedQuery> {
  const t = tables(ns);
  const columns = SESSION_COLUMNS.split(', ')
    .map((column) => `s.${column}`)
    .join(', ');
  return (shape) => {
    const others = Array.from(
      { length: shape.pairs - 1 },
      (_, i) => `
        JOIN ${t.tags} o${i} ON o${i}.session_id = w.session_id AND o${i}.k = :k${i + 1} AND o${i}.value = :v${i + 1}`,
    ).join('');
    const prefix = shape.prefix ? ' AND w.session_id >= :prefix AND w.session_id < :bound' : '';
    const after = shape.after
      ? `
         AND (w.updated_at < :updatedAt OR (w.updated_at = :updatedAt AND w.session_id < :sessionId))`
      : '';
    const { sql, args } = named<Record<string, unknown>>(`
      SELECT STRAIGHT_JOIN ${columns}
        FROM ${t.tags} w${others}
        JOIN ${t.sessions} s ON s.id = w.session_id
       WHERE w.k = :k0 AND w.value = :v0${prefix}${after}
       ORDER BY w.updated_at DESC, w.session_id DESC LIMIT :limit`);
    return {
      sql: statement(sql),
      args: (query) => {
        const values: Record<string, unknown> = {
          prefix: query.prefix,
          bound: query.bound,
          updatedAt: query.after?.updatedAt,
          sessionId: query.after?.sessionId,
          limit: query.limit,
        };
        for (const [i, [key, value]] of query.where.entries()) {
          values[`k${i}`] = Buffer.from(key);
          values[`v${i}`] = Buffer.from(value);
        }
        return args(values);
      },
    };
  };
}

/**
 * `statement`, with the values `names` sent as the bytes their columns hold (storedBytesOf):
 * data and transcript items. mysql2 sends bytes as binary, prepared or escaped as hex.
 */
function sendingBytes<In extends object>(
  statement: SqlStatement<string, In>,
  names: readonly (keyof In & string)[],
): SqlStatement<string, In> {
  return {
    sql: statement.sql,
    args: (input) => {
      const values: Record<string, unknown> = { ...(input as Record<string, unknown>) };
      for (const name of names) values[name] = storedBytesOf(input[name] as string);
      return statement.args(values as In);
    },
  };
}

/** The mutations, each one CALL of a procedure the migration created (see stored-code.ts). */
function procedures(ns: string): SqlProcedures<MysqlStatement> {
  return prepareEach(
    {
      append: sendingBytes(
        named<AppendValues>(`
        CALL ${ns}_append_tagged(:sessionId, :data, :metadata, :transcript, :checkHead,
                                 :expectedHead, :idempotencyKey, :now, :needs, :setTags, :tags)`),
        ['data', 'transcript'],
      ),
      rollback: named(`CALL ${ns}_rollback(:sessionId, :seq, :checkHead, :expectedHead, :now)`),
      fork: named(`CALL ${ns}_fork(:sessionId, :atSeq, :newId, :now)`),
      prune: named(`CALL ${ns}_prune(:sessionId, :keepLast, :createdBefore, :dryRun)`),
      delete: named(`CALL ${ns}_delete(:sessionId)`),
      pin: named(`CALL ${ns}_pin(:sessionId, :seq, :note)`),
      unpin: named(`CALL ${ns}_unpin(:sessionId, :seq)`),
      deleteIdle: named(`CALL ${ns}_delete_idle(:sessionId, :idleBefore, :dryRun)`),
      deleteIdleBatch: named(`CALL ${ns}_delete_idle_batch(:idleBefore, :limit)`),
      setTags: named(`CALL ${ns}_set_tags(:sessionId, :tags)`),
    },
    statement,
  );
}

/**
 * One call of a batch as `append_batch` reads it: a JSON array of these values, in this order
 * (its JSON_TABLE's paths `$[0]` to `$[10]`, see stored-code.ts), flags as 1 or 0, and data and
 * transcript items as the lengths of their bytes, which follow one another in the second value.
 */
const BATCH_CALL: readonly (keyof AppendValues)[] = [
  'sessionId',
  'data',
  'metadata',
  'transcript',
  'checkHead',
  'expectedHead',
  'idempotencyKey',
  'now',
  'needs',
  'setTags',
  'tags',
];

/**
 * The checkpoints that waited for a connection, as one CALL of `append_batch`: one JSON text,
 * and the bytes of every call's data and transcript items, in order.
 */
function appendBatchCall(ns: string): SqlStatement<MysqlStatement, AppendValues[]> {
  return {
    sql: statement(`CALL ${ns}_append_batch($1, $2)`),
    args: (calls) => {
      const values: Buffer[] = [];
      const lengthOf = (text: string) => {
        const bytes = storedBytesOf(text);
        values.push(bytes);
        return bytes.length;
      };
      const json = JSON.stringify(
        calls.map((call) =>
          BATCH_CALL.map((name) => {
            const value = call[name];
            if (name === 'data' || name === 'transcript') return lengthOf(value as string);
            return typeof value === 'boolean' ? +value : value;
          }),
        ),
      );
      return [json, Buffer.concat(values)];
    },
  };
}

// A call of a batch that waited too long for a lock undid only its own savepoint; alone, it
// goes through the driver, whose lock waits core runs again (a deadlock fails the whole batch,
// which core runs again).
const AGAIN_ALONE = new Set(['1205']);

/** Session ids as the server orders them: by UTF-8 bytes. */
const byIdBytes = (a: AppendInput, b: AppendInput) =>
  Buffer.compare(Buffer.from(a.sessionId), Buffer.from(b.sessionId));

/**
 * Group commit: every checkpoint that waited, in the order of their session ids (so that
 * batches lock sessions in one order), as one CALL with an outcome row each; one alone goes
 * as a plain append.
 */
function appendBatch(ns: string): SqlAppendBatch<MysqlStatement> {
  const call = appendBatchCall(ns);
  return {
    carries: (inputs) =>
      inputs.length < 2
        ? []
        : inputs
            .map((input, i) => ({ input, i }))
            .sort((a, b) => byIdBytes(a.input, b.input))
            .map(({ i }) => i),
    statement: () => call,
    outcomes: (rows) =>
      (rows as unknown as BatchAppendRow[]).map((row) => {
        const outcome = batchAppendOutcomeFromRow(row);
        return 'error' in outcome && AGAIN_ALONE.has(errorCode(outcome.error)) ? AGAIN : outcome;
      }),
  };
}

/** The statements of a key-value table (`keys`: its key columns), the state or the KV table. */
function keyValueStatements(
  table: string,
  keys: readonly string[],
): KeyValueStatements<MysqlStatement> {
  return prepareKeyValue(keyValueSql({ table, keys, onConflict: 'ON DUPLICATE KEY' }), statement);
}

/**
 * The statements of an import, each with `?` placeholders and its values in order: one
 * transaction that locks (or finds absent) the session's row, removes what the id held when
 * replacing it, inserts the checkpoints' rows a run at a time, then the session's row, its tags
 * in it (the schema's triggers index them, and remove the replaced session's with its row).
 */
function importStatements(ns: string) {
  const t = tables(ns);
  const placeholders = (n: number) => Array.from({ length: n }, () => '?').join(', ');
  return {
    lockSession: `SELECT head FROM ${t.sessions} WHERE id = ? FOR UPDATE`,
    /** Remove a session's rows: sessionId each. */
    removeSession: [
      ...[t.checkpoints, t.bodies, t.transcripts, t.idempotency, t.needs, t.pins].map(
        (table) => `DELETE FROM ${table} WHERE session_id = ?`,
      ),
      `DELETE FROM ${t.sessions} WHERE id = ?`,
    ],
    /** The checkpoints' rows, table by table: each row's values in the order of `columns`. */
    rows: {
      checkpoints: {
        table: t.checkpoints,
        columns: 'session_id, seq, parent, created_at, metadata',
      },
      bodies: { table: t.bodies, columns: 'session_id, seq, data' },
      transcripts: { table: t.transcripts, columns: 'session_id, seq, items' },
      needs: { table: t.needs, columns: 'session_id, seq, needed' },
      pins: { table: t.pins, columns: 'session_id, seq, note' },
    },
    /** `n` rows of `columns` into `table`. */
    insert: (table: string, columns: string, n: number) => {
      const one = `(${placeholders(columns.split(',').length)})`;
      return `INSERT INTO ${table} (${columns}) VALUES ${Array.from({ length: n }, () => one).join(', ')}`;
    },
    /** The session's row, its values in the order of `columns`. */
    insertSession: (columns: readonly string[]) =>
      `INSERT INTO ${t.sessions} (${columns.join(', ')}) VALUES (${placeholders(columns.length)})`,
  };
}

/**
 * A checkpoint's data and transcript items replaced while they still hold the values compared: one
 * UPDATE of both rows (a checkpoint without items has no transcript row, and keeps none), so both
 * change or neither. Changes a row when rewritten. Written as the bytes the columns hold; each
 * value compared in both forms a row may hold it in (see RewriteBytes): the bytes storedBytesOf
 * makes, which every row holds since step 8, and the UTF-8 of its text, which a process of
 * version 7 still running writes after the upgrade (its text, compared with bytes, as bytes).
 */
function rewrite(ns: string): SqlStatement<MysqlStatement, RewriteValues> {
  const t = tables(ns);
  const { sql, args } = named<RewriteBytes>(`
    UPDATE ${t.bodies} b
      LEFT JOIN ${t.transcripts} x ON x.session_id = b.session_id AND x.seq = b.seq
       SET b.data = :toData, x.items = :toTranscript
     WHERE b.session_id = :sessionId AND b.seq = :seq AND b.data IN (:fromData, :fromDataText)
       AND COALESCE(x.items, '[]') IN (:fromTranscript, :fromTranscriptText)`);
  return { sql: statement(sql), args: (values) => args(rewriteBytes(values)) };
}

/** The backend's statements in namespace `ns`. */
export function backendStatements(ns: string) {
  return {
    reads: reads(ns),
    writes: {
      ...procedures(ns),
      appendBatch: appendBatch(ns),
      rewrite: rewrite(ns),
    } satisfies SqlWriteStatements<MysqlStatement>,
    /** An import's statements, which the backend runs itself (see import.ts). */
    imports: importStatements(ns),
    state: keyValueStatements(tables(ns).state, ['scope', 'k']),
  };
}

/** The KV store's statements in namespace `ns`. */
export function kvStatements(ns: string): KeyValueStatements<MysqlStatement> {
  return keyValueStatements(tables(ns).kv, ['k']);
}
