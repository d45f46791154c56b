/**
 * The native MySQL / MariaDB backend. Each mutation is one CALL of a stored procedure (one
 * transaction); each read is one statement; each statement is one round trip once its
 * connection has prepared it (see connection.ts). Deadlocks and lock-wait timeouts,
 * after which the server has rolled the transaction back, are retried here.
 */
import { SqlBackend, type SqlResult, type SqlStatementName, type SqlStatements } from '@ckpt/core';
import type { Pool } from 'mysql2/promise';
import {
  type Connection,
  connect,
  type MysqlOptions,
  openStatements,
  type Statements,
} from './connection.js';
import { tables } from './schema.js';

/** A statement as MySQL takes it: its SQL with `?` for each value, and which value each takes. */
interface Numbered {
  sql: string;
  /** For each `?`, left to right, the index of the value it takes. */
  order: number[];
  /** A CALL, whose rows are its first result set. */
  call: boolean;
}

/** `text` written with numbered parameters (`$1` is the first value), as MySQL takes it. */
function numbered(text: string): Numbered {
  const order: number[] = [];
  const sql = text.replace(/\$(\d+)/g, (_, n: string) => {
    order.push(Number(n) - 1);
    return '?';
  });
  return { sql, order, call: sql.startsWith('CALL') };
}

function statements(ns: string): SqlStatements<Numbered> {
  const t = tables(ns);
  const sessionColumns =
    'id, head, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at';
  const text: SqlStatements<string> = {
    append: `CALL ${ns}_append($1, $2, $3, $4, $5, $6, $7, $8)`,
    rollback: `CALL ${ns}_rollback($1, $2, $3, $4, $5)`,
    fork: `CALL ${ns}_fork($1, $2, $3, $4)`,
    prune: `CALL ${ns}_prune($1, $2)`,
    delete: `CALL ${ns}_delete($1)`,
    // A load is one SELECT, so it reads the head and its checkpoint from one snapshot. Prepared
    // once per connection, a join costs less than the CALL of the `<ns>_load` procedure that
    // earlier versions made (which stays for them).
    loadHead: `
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at, s.metadata, b.data
        FROM ${t.sessions} s JOIN ${t.bodies} b ON b.session_id = s.id AND b.seq = s.head
       WHERE s.id = $1`,
    loadSeq: `
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
        FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
       WHERE c.session_id = $1 AND c.seq = $2`,
    session: `SELECT ${sessionColumns} FROM ${t.sessions} WHERE id = $1`,
    listCheckpoints: `
      SELECT seq, parent, created_at, metadata FROM ${t.checkpoints}
       WHERE session_id = $1 AND ($2 IS NULL OR seq < $2) ORDER BY seq DESC LIMIT $3`,
    // Both servers stop a recursive query after 1,000 steps by default (MariaDB silently, with
    // a partial result), far fewer than a long session's history: each raises it for this
    // statement alone, MariaDB through its executable comment, MySQL 8 through a hint, and
    // each ignores the other's.
    lineage: `/*M! SET STATEMENT max_recursive_iterations = 4294967295 FOR */
      WITH RECURSIVE chain (seq, parent, created_at, depth) AS (
        SELECT c.seq, c.parent, c.created_at, 1 FROM ${t.checkpoints} c
         WHERE c.session_id = $1 AND c.seq = COALESCE($2, (SELECT head FROM ${t.sessions} WHERE id = $1))
        UNION ALL
        SELECT c.seq, c.parent, c.created_at, chain.depth + 1
          FROM chain JOIN ${t.checkpoints} c ON c.session_id = $1 AND c.seq = chain.parent
         WHERE chain.depth < $3
      )
      SELECT /*+ SET_VAR(cte_max_recursion_depth = 4294967295) */ chain.seq, chain.parent, chain.created_at,
             CASE WHEN $4 THEN COALESCE((SELECT x.items FROM ${t.transcripts} x
                                          WHERE x.session_id = $1 AND x.seq = chain.seq), '[]') END AS transcript
        FROM chain ORDER BY chain.depth`,
    sessionsFirst: `SELECT ${sessionColumns} FROM ${t.sessions} ORDER BY updated_at DESC, id DESC LIMIT $1`,
    sessionsAfter: `
      SELECT ${sessionColumns} FROM ${t.sessions}
       WHERE updated_at < $1 OR (updated_at = $1 AND id < $2)
       ORDER BY updated_at DESC, id DESC LIMIT $3`,
    stateGet: `SELECT value FROM ${t.state} WHERE scope = $1 AND k = $2`,
    stateSet: `INSERT INTO ${t.state} (scope, k, value) VALUES ($1, $2, $3) ON DUPLICATE KEY UPDATE value = VALUES(value)`,
    stateDelete: `DELETE FROM ${t.state} WHERE scope = $1 AND k = $2`,
    stateInsert: `INSERT IGNORE INTO ${t.state} (scope, k, value) VALUES ($1, $2, $3)`,
    stateReplace: `UPDATE ${t.state} SET value = $4 WHERE scope = $1 AND k = $2 AND value = $3`,
    stateKeys: `
      SELECT k AS \`key\` FROM ${t.state}
       WHERE scope = $1 AND k >= $2 AND ($3 IS NULL OR k < $3) AND ($4 IS NULL OR k > $4)
       ORDER BY k LIMIT $5`,
  };
  const names = Object.keys(text) as SqlStatementName[];
  return Object.fromEntries(names.map((name) => [name, numbered(text[name])])) as Record<
    SqlStatementName,
    Numbered
  >;
}

/** Ids and state keys come back from VARBINARY columns as bytes; the backend contract wants text. */
function idsAsText(rows: Record<string, unknown>[]): Record<string, unknown>[] {
  for (const row of rows) {
    for (const column in row) {
      const value = row[column];
      if (Buffer.isBuffer(value)) row[column] = value.toString('utf8');
    }
  }
  return rows;
}

/** The MySQL / MariaDB backend (see `mysql()`). */
export class MysqlBackend extends SqlBackend {
  readonly name = 'mysql';
  readonly namespace: string;
  /** The promise pool queries run on. */
  readonly pool: Pool;
  readonly #connection: Connection;
  readonly #sql: SqlStatements<Numbered>;
  readonly #statements: Statements;
  #closed = false;

  constructor(options: MysqlOptions) {
    super();
    this.#connection = connect(options);
    this.pool = this.#connection.pool;
    this.namespace = this.#connection.namespace;
    this.#sql = statements(this.namespace);
    this.#statements = openStatements(
      this.pool,
      this.namespace,
      this.#connection.preparedStatements,
    );
  }

  /** Resolves once the tables are migrated; rejects (with SCHEMA or UNSUPPORTED) when they cannot be. */
  ready(): Promise<void> {
    return this.#statements.ready;
  }

  protected async run<Row>(name: SqlStatementName, values: unknown[]): Promise<SqlResult<Row>> {
    const statement = this.#sql[name];
    const result = await this.#statements.run(
      statement.sql,
      statement.order.map((i) => values[i]),
    );
    if (!Array.isArray(result)) {
      return { rows: [], changed: (result as { affectedRows: number }).affectedRows };
    }
    // A CALL gives its result sets, then a header: the rows are the first set.
    const rows = statement.call ? result[0] : result;
    return { rows: idsAsText(rows) as Row[], changed: 0 };
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#statements.ready.catch(() => {});
    if (this.#connection.owned) await this.pool.end();
  }
}
