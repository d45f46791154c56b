/** The key-value table statements in PostgreSQL's SQL, for the state table and the KV table. */
import { type KeyValueStatements, keyValueSql } from '@ckpt/core/sql';
import { prepared, type Statement } from './statement-runner.js';

/**
 * The statements of a key-value table (`keys`: its key columns), the state table or the KV
 * table: prepared, but for the page, whose plan depends on its bounds.
 */
export function keyValueStatements(
  table: string,
  keys: readonly string[],
): KeyValueStatements<Statement | string> {
  const sql = keyValueSql({
    table,
    keys,
    onConflict: 'ON CONFLICT',
    nullable: (n) => `$${n}::text`,
  });
  return {
    get: prepared(sql.get),
    set: prepared(sql.set),
    delete: prepared(sql.delete),
    insert: prepared(sql.insert),
    replace: prepared(sql.replace),
    keys: sql.keys,
  };
}
