/**
 * The statement of a listing by tags (SqlReads.taggedSessions): one walk of the tags table's
 * index `<tags>_by_tag` (key, value, updated_at DESC, session_id DESC) over the entries of the
 * first pair, which come in the catalog's order, so that a page reads as many entries as it
 * lists, and the sessions that are not listed are never read. The other pairs are each checked
 * on the tags table's primary key (session_id, key); a prefix is a range of the ids the
 * entries carry, and a position to start after a bound on the walk itself.
 */
import { named, type SqlStatement, type TaggedQuery, type TaggedShape } from '@ckpt/core/sql';
import type { tables } from './schema.js';

type Tables = ReturnType<typeof tables>;

/** The statement of a tagged listing of `shape`, in SQLite's SQL. */
export function taggedSessions(t: Tables, shape: TaggedShape): SqlStatement<string, TaggedQuery> {
  const others = Array.from({ length: shape.pairs - 1 }, (_, i) => i + 1);
  // CROSS JOIN keeps the walk of the index the outer loop, whatever the planner guesses of
  // the sessions table. Each `+` keeps a term from choosing an index: the prefix would take
  // the primary key's range of ids in place of the walk, and another pair's (key, value) would
  // have each check read the index entries of every session with that pair (the planner chose
  // so once ANALYZE had counted a pair most sessions have).
  const statement = named<Record<string, unknown>>(`
    SELECT s.* FROM ${t.tags} m CROSS JOIN ${t.sessions} s ON s.id = m.session_id
     WHERE m.key = :key0 AND m.value = :value0
       ${shape.prefix ? 'AND +m.session_id >= :prefix AND +m.session_id < :bound' : ''}
       ${shape.after ? 'AND (m.updated_at, m.session_id) < (:updatedAt, :sessionId)' : ''}
       ${others
         .map(
           (i) => `AND EXISTS (SELECT 1 FROM ${t.tags} o
                     WHERE o.session_id = m.session_id AND o.key = :key${i} AND +o.value = :value${i})`,
         )
         .join('\n')}
     ORDER BY m.updated_at DESC, m.session_id DESC LIMIT :limit`);
  return { sql: statement.sql, args: (query) => statement.args(parameters(query)) };
}

/** A query's values by the names the statement gives them. */
function parameters(query: TaggedQuery): Record<string, unknown> {
  const values: Record<string, unknown> = {
    prefix: query.prefix,
    bound: query.bound,
    updatedAt: query.after?.updatedAt,
    sessionId: query.after?.sessionId,
    limit: query.limit,
  };
  for (const [i, [key, value]] of query.where.entries()) {
    values[`key${i}`] = key;
    values[`value${i}`] = value;
  }
  return values;
}
