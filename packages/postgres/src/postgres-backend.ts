/**
 * The native PostgreSQL backend. Each mutation is one statement, most of them a call of a
 * function the migration created (one round trip, one transaction); a checkpoint that
 * conflicts takes two. Each read is one statement. Nothing depends on session state between
 * statements, so any pool or PgBouncer in transaction mode works.
 */
import {
  type AppendInput,
  type AppendResult,
  type AppendRow,
  appendResultFromRow,
  procedureArgs,
  SqlBackend,
  type SqlResult,
  type SqlStatementName,
  type SqlStatements,
} from '@ckpt/core';
import type pg from 'pg';
import {
  type Connection,
  connect,
  migrate,
  type PostgresOptions,
  prepared,
  type Statement,
  statementRunner,
} from './connection.js';
import { schemaIdentifier } from './schema.js';

// Every statement, in one place and readable on its own. `$n` are parameters. The pages
// that take optional bounds are parsed on each call, so that each is planned for its values;
// every other statement is prepared once per connection.
function statements(namespace: string): SqlStatements<Statement | string> {
  const ns = schemaIdentifier(namespace);
  const sessionColumns =
    'id, head, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at';
  return {
    append: prepared(`SELECT * FROM ${ns}.append($1, $2, $3, $4, $5, $6, $7, $8)`),
    rollback: prepared(`SELECT * FROM ${ns}.rollback($1, $2, $3, $4, $5)`),
    fork: prepared(`SELECT * FROM ${ns}.fork($1, $2, $3, $4)`),
    prune: prepared(`SELECT ${ns}.prune($1, $2) AS removed`),
    delete: prepared(`SELECT ${ns}.delete_session($1) AS deleted`),
    // A load is one SELECT, so it reads the head and its checkpoint from one snapshot. Prepared,
    // it costs less than a call of the `load` function earlier versions made (which stays for
    // them): the function hands its rows back through a buffer of its own. The body is a
    // subquery, not a join: once the tables have statistics, the cached generic plan of the
    // join looks the body up by session alone (one row a session, it guesses) and filters the
    // seq, reading every body of a session with thousands; the subquery can only look it up by
    // its whole key.
    loadHead: prepared(`
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at, s.metadata,
             (SELECT b.data FROM ${ns}.bodies b WHERE b.session_id = s.id AND b.seq = s.head) AS data
        FROM ${ns}.sessions s
       WHERE s.id = $1`),
    loadSeq: prepared(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
        FROM ${ns}.checkpoints c JOIN ${ns}.bodies b ON b.session_id = c.session_id AND b.seq = c.seq
       WHERE c.session_id = $1 AND c.seq = $2`),
    session: prepared(`SELECT ${sessionColumns} FROM ${ns}.sessions WHERE id = $1`),
    listCheckpoints: `
      SELECT seq, parent, created_at, metadata FROM ${ns}.checkpoints
       WHERE session_id = $1 AND ($2::bigint IS NULL OR seq < $2)
       ORDER BY seq DESC LIMIT $3`,
    lineage: prepared(`SELECT * FROM ${ns}.lineage($1, $2, $3, $4)`),
    sessionsFirst: prepared(
      `SELECT ${sessionColumns} FROM ${ns}.sessions ORDER BY updated_at DESC, id DESC LIMIT $1`,
    ),
    sessionsAfter: `
      SELECT ${sessionColumns} FROM ${ns}.sessions WHERE (updated_at, id) < ($1, $2)
       ORDER BY updated_at DESC, id DESC LIMIT $3`,
    stateGet: prepared(`SELECT value FROM ${ns}.state WHERE scope = $1 AND key = $2`),
    stateSet: prepared(`
      INSERT INTO ${ns}.state (scope, key, value) VALUES ($1, $2, $3)
      ON CONFLICT (scope, key) DO UPDATE SET value = excluded.value`),
    stateDelete: prepared(`DELETE FROM ${ns}.state WHERE scope = $1 AND key = $2`),
    stateInsert: prepared(
      `INSERT INTO ${ns}.state (scope, key, value) VALUES ($1, $2, $3) ON CONFLICT DO NOTHING`,
    ),
    stateReplace: prepared(
      `UPDATE ${ns}.state SET value = $4 WHERE scope = $1 AND key = $2 AND value = $3`,
    ),
    stateKeys: `
      SELECT key FROM ${ns}.state
       WHERE scope = $1 AND key >= $2 AND ($3::text IS NULL OR key < $3) AND ($4::text IS NULL OR key > $4)
       ORDER BY key LIMIT $5`,
  };
}

/**
 * A checkpoint without an idempotency key as one statement, instead of a call of the `append`
 * function: the function's PL/pgSQL costs some 40 µs a call on top of the same writes. The
 * statement writes only where it can go straight through: the session exists and its head is
 * as expected, or the session is new and nobody creates it at the same moment. Anywhere else
 * it writes nothing and returns no row, and `append` (a second statement) decides what
 * happened. It takes the values `append` takes, in the same order; it writes nothing when
 * given a key (`$7`), since a keyed checkpoint must record its key, which only `append` does.
 */
function appendDirect(namespace: string): Statement {
  const ns = schemaIdentifier(namespace);
  return prepared(`
    WITH moved AS (
      UPDATE ${ns}.sessions s
         SET head_parent = s.head, head = s.last_seq + 1, last_seq = s.last_seq + 1,
             checkpoints = s.checkpoints + 1, metadata = $3, updated_at = $8, head_created_at = $8
       WHERE s.id = $1 AND (NOT $5 OR s.head IS NOT DISTINCT FROM $6::bigint) AND $7::text IS NULL
      RETURNING s.head AS seq, s.head_parent AS parent
    ), created AS (
      INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata,
                                       created_at, updated_at, head_created_at)
      SELECT $1, 1, NULL, 1, 1, $3, $8, $8, $8
       WHERE NOT EXISTS (SELECT FROM moved) AND (NOT $5 OR $6::bigint IS NULL) AND $7::text IS NULL
      ON CONFLICT (id) DO NOTHING
      RETURNING s.head AS seq, s.head_parent AS parent
    ), written AS (
      SELECT seq, parent FROM moved UNION ALL SELECT seq, parent FROM created
    ), checkpoint AS (
      INSERT INTO ${ns}.checkpoints (session_id, seq, parent, created_at, metadata)
      SELECT $1, seq, parent, $8, $3 FROM written
    ), body AS (
      INSERT INTO ${ns}.bodies (session_id, seq, data) SELECT $1, seq, $2 FROM written
    ), transcript AS (
      INSERT INTO ${ns}.transcripts (session_id, seq, items)
      SELECT $1, seq, $4::text FROM written WHERE $4::text <> '[]'
    )
    SELECT 'written' AS status, seq, parent FROM written`);
}

/** The PostgreSQL backend (see `postgres()`). */
export class PostgresBackend extends SqlBackend {
  readonly name = 'postgres';
  readonly namespace: string;
  /** The pool queries run on. */
  readonly pool: pg.Pool;
  readonly #connection: Connection;
  readonly #sql: SqlStatements<Statement | string>;
  readonly #ready: Promise<void>;
  readonly #run: ReturnType<typeof statementRunner>;
  readonly #appendDirect: Statement;

  constructor(options: PostgresOptions) {
    super();
    this.#connection = connect(options);
    this.pool = this.#connection.pool;
    this.namespace = this.#connection.namespace;
    this.#sql = statements(this.namespace);
    this.#appendDirect = appendDirect(this.namespace);
    this.#run = statementRunner(this.pool, this.#connection.preparedStatements);
    this.#ready = migrate(this.pool, this.namespace);
    // Reported by the first call that awaits it, not as an unhandled rejection.
    this.#ready.catch(() => {});
  }

  /** Resolves once the schema is migrated; rejects (with SCHEMA) when it cannot be. */
  ready(): Promise<void> {
    return this.#ready;
  }

  protected run<Row>(name: SqlStatementName, values: unknown[]): Promise<SqlResult<Row>> {
    return this.#send(this.#sql[name], values);
  }

  override async append(input: AppendInput): Promise<AppendResult> {
    if (input.idempotencyKey === undefined) {
      const direct = await this.#send<AppendRow>(this.#appendDirect, procedureArgs.append(input));
      if (direct.rows[0]) return appendResultFromRow(direct.rows[0]);
    }
    return super.append(input);
  }

  async #send<Row>(statement: Statement | string, values: unknown[]): Promise<SqlResult<Row>> {
    await this.#ready;
    const result = await this.#run(statement, values);
    return { rows: result.rows as Row[], changed: result.rowCount ?? 0 };
  }

  async close(): Promise<void> {
    await this.#ready.catch(() => {});
    if (this.#connection.owned && !this.pool.ended) await this.pool.end();
  }
}
