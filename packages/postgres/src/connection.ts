/**
 * The pool a store runs on, how statements go to it (prepared once per connection where it
 * keeps them), the per-query type parsing they need, and the schema migration that runs once
 * when a store opens.
 */

import { createHash } from 'node:crypto';
import { errorCode, migrationStart, openConnection, retryRolledBack } from '@ckpt/core';
import pg from 'pg';
import { checkOwnSchema, migrations, schemaIdentifier, TABLES } from './schema.js';

/** Options of `postgres()` and `postgresKv()`: a connection string or an existing pool. */
export type PostgresOptions = ({ url: string } | { pool: pg.Pool }) & {
  /** The schema that holds every table and function; default `ckpt`. */
  namespace?: string;
  /**
   * Prepare statements once per connection (default true). False sends every statement
   * unnamed: for a proxy that pins a client to one server connection once it prepares a
   * statement, such as RDS Proxy.
   */
  preparedStatements?: boolean;
};

// bigint columns (seq, times) come back as JavaScript numbers; they stay far below 2^53.
// Passed with each query, so that the user's own pool keeps its global type parsers.
const INT8 = 20;
const TYPES = {
  getTypeParser: ((oid: number, format?: 'text' | 'binary') =>
    oid === INT8
      ? (value: string) => Number(value)
      : pg.types.getTypeParser(oid, format)) as typeof pg.types.getTypeParser,
};

// A serialization failure or a deadlock: the server has rolled back the whole call (each runs
// in a transaction of its own), so running it again is safe.
const SERIALIZATION_FAILURE = '40001';
const ROLLED_BACK = new Set([SERIALIZATION_FAILURE, '40P01']);

/** A statement; one with a name is prepared under it (see statementRunner). */
export interface Statement {
  readonly text: string;
  readonly name?: string;
}

/**
 * `text` as a statement each connection parses and plans once, named after a hash of its text:
 * for statements whose best plan does not depend on their values (primary-key lookups and
 * function calls), where parsing and planning would otherwise take a good part of the call.
 */
export function prepared(text: string): Statement {
  return { text, name: `ckpt_${createHash('sha256').update(text).digest('hex').slice(0, 32)}` };
}

// A connection that does not keep what was prepared on it (PgBouncer before 1.21 in
// transaction mode hands each statement to any server connection; a reset such as DISCARD ALL
// drops them), or a plan cached before a migration changed the columns a function returns.
// Each is raised before the statement runs; and a statement is a transaction of its own, so
// whatever fails leaves nothing behind to run twice.
const NOT_PREPARED = new Set(['26000', '42P05', '0A000']);

/**
 * Runs statements on `pool`. Named statements are prepared on each connection the first time
 * they run there; from the first time a connection refuses a name, this runner sends every
 * statement unnamed (parsed on each call), which works through any pooler. Every statement
 * runs in a transaction of its own, so one refused before it ran is simply sent again. With
 * `prepare` false, every statement goes unnamed from the start.
 */
export function statementRunner(
  pool: pg.Pool,
  prepare: boolean,
): (statement: Statement | string, values: unknown[]) => Promise<pg.QueryResult> {
  let named = prepare;
  const rolledBack = new Set<string>();
  const run = (text: string, values: unknown[], name?: string) =>
    runStatement(pool, text, values, rolledBack, name);
  return async (statement, values) => {
    const { text, name } = typeof statement === 'string' ? { text: statement } : statement;
    if (!named || name === undefined) return run(text, values);
    try {
      return await run(text, values, name);
    } catch (err) {
      if (!NOT_PREPARED.has(errorCode(err))) throw err;
      named = false;
      return run(text, values);
    }
  };
}

/**
 * Run one statement, again while the server rolls it back. Serialization failures come only
 * from a pool whose default isolation is REPEATABLE READ or SERIALIZABLE, where a writer that
 * waited for a session row fails once the row changes. ckpt's functions are written for READ
 * COMMITTED, where the writer goes on with the row as changed, so such a call runs again at
 * READ COMMITTED: retrying at the stricter level would fail over and over while other writers
 * keep one session busy. A statement rolled back once (`rolledBack` holds its text) runs at
 * READ COMMITTED from then on: calls that first try the stricter level, beside reruns at READ
 * COMMITTED on the same row, made 16 writers on one session 13 times slower (1,600
 * checkpoints in 26 s, against 2 s).
 */
function runStatement(
  pool: pg.Pool,
  text: string,
  values: unknown[],
  rolledBack: Set<string>,
  name?: string,
): Promise<pg.QueryResult> {
  return retryRolledBack(async () => {
    if (rolledBack.has(text)) return atReadCommitted(pool, text, values);
    try {
      return await pool.query({ text, values, types: TYPES, ...(name && { name }) });
    } catch (err) {
      if (errorCode(err) === SERIALIZATION_FAILURE) rolledBack.add(text);
      throw err;
    }
  }, ROLLED_BACK);
}

/**
 * The statement in a transaction at READ COMMITTED. SET TRANSACTION must open the transaction,
 * so both go in one simple query (one round trip, one transaction, undone whole on an error),
 * which carries no parameters: the values go in as literals.
 */
async function atReadCommitted(
  pool: pg.Pool,
  text: string,
  values: unknown[],
): Promise<pg.QueryResult> {
  const inlined = text.replace(/\$(\d+)/g, (_, n: string) => literal(values[Number(n) - 1]));
  const results = (await pool.query({
    text: `SET TRANSACTION ISOLATION LEVEL READ COMMITTED; ${inlined}`,
    types: TYPES,
  })) as unknown as pg.QueryResult[];
  return results[1]!;
}

/** A statement's value as an SQL literal: text, an integer, a boolean or null. */
function literal(value: unknown): string {
  if (value === null || value === undefined) return 'NULL';
  if (typeof value === 'boolean') return value ? 'TRUE' : 'FALSE';
  if (typeof value === 'number') return String(value);
  return pg.escapeLiteral(String(value));
}

/** A pool, whether it is ours to close, the namespace, and whether to prepare statements. */
export interface Connection {
  pool: pg.Pool;
  owned: boolean;
  namespace: string;
  preparedStatements: boolean;
}

/** Open (or adopt) the pool named by `options`. */
export function connect(options: PostgresOptions): Connection {
  const { handle, owned, namespace, switches } = openConnection<pg.Pool>(options, {
    factory: 'postgres',
    handle: 'pool',
    handleKind: 'a pg.Pool',
    methods: ['query', 'connect'],
    example: 'postgres://user@host:5432/db',
    switches: ['preparedStatements'],
    refuseNamespace: checkOwnSchema,
    open(url) {
      // A pool reads its URL only when it first connects; a client reads it at once, so a
      // URL the driver cannot read is refused here rather than at the first call.
      new pg.Client({ connectionString: url });
      const pool = new pg.Pool({ connectionString: url, max: 10 });
      // A connection that breaks while idle is dropped from the pool; the next call gets a
      // fresh one. Without a listener, the pool would crash the process.
      pool.on('error', () => {});
      return pool;
    },
  });
  return { pool: handle, owned, namespace, preparedStatements: switches.preparedStatements! };
}

/**
 * Bring schema `ns` to SCHEMA_VERSION under a transaction-scoped advisory lock, so that
 * processes starting at once against an empty database migrate it once.
 */
export async function migrate(pool: pg.Pool, ns: string): Promise<void> {
  const schema = schemaIdentifier(ns);
  const client = await pool.connect();
  try {
    // READ COMMITTED whatever the pool's default: each statement must see what a migration
    // that held the lock before this one committed, not a snapshot from before the wait.
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    await client.query('SELECT pg_advisory_xact_lock(hashtext($1))', [`ckpt:migrate:${ns}`]);
    const found = await client.query<{ tablename: string }>(
      'SELECT tablename FROM pg_tables WHERE schemaname = $1 AND tablename = ANY($2)',
      [ns, TABLES],
    );
    const names = new Set(found.rows.map((r) => r.tablename));
    const recorded = names.has('meta')
      ? await client.query<{ value: string }>(
          `SELECT value FROM ${schema}.meta WHERE key = 'schema_version'`,
        )
      : undefined;
    const steps = migrations(ns);
    const current = migrationStart(
      {
        hasMeta: names.has('meta'),
        recorded: recorded && (recorded.rows[0]?.value ?? null),
        ownTables: [...names].filter((name) => name !== 'meta'),
      },
      steps.length,
      `schema '${ns}'`,
      '@ckpt/postgres',
    );
    if (current === 0) {
      // CREATE SCHEMA checks for CREATE on the database before it looks for the schema, even
      // with IF NOT EXISTS: a schema an administrator made for this user is used as it is.
      const made = await client.query('SELECT FROM pg_namespace WHERE nspname = $1', [ns]);
      if (made.rowCount === 0) await client.query(`CREATE SCHEMA IF NOT EXISTS ${schema}`);
      await client.query(`CREATE TABLE ${schema}.meta (key text PRIMARY KEY, value text NOT NULL)`);
    }
    // A schema already current is only read, so that a role that may only read opens it too.
    if (current < steps.length) {
      for (let v = current; v < steps.length; v++) await client.query(steps[v]!);
      await client.query(
        `INSERT INTO ${schema}.meta (key, value) VALUES ('schema_version', $1)
         ON CONFLICT (key) DO UPDATE SET value = excluded.value`,
        [String(steps.length)],
      );
    }
    await client.query('COMMIT');
  } catch (err) {
    await client.query('ROLLBACK').catch(() => {});
    throw err;
  } finally {
    client.release();
  }
}
