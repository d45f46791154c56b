/**
 * The native PostgreSQL backend. Each mutation is one statement, most of them a call of a
 * function the migration created (one round trip, one transaction); a checkpoint that
 * conflicts takes two, and an import that replaces a session is one transaction of three.
 * Each read is one statement. Nothing depends on session state between
 * statements, so any pool or PgBouncer in transaction mode works.
 */
import type {
  AppendInput,
  AppendResult,
  Diagnosis,
  ErrorHint,
  ImportInput,
} from '@ckpt/core/adapter';
import {
  AGAIN,
  appendProcedureArgs,
  type BatchOutcome,
  importedSessionRow,
  SqlProcedureBackend,
  type SqlProcedures,
  type SqlReads,
  type SqlResult,
} from '@ckpt/core/sql';
import pg from 'pg';
import { connect, type PostgresOptions } from './connection.js';
import { destroySchema } from './destroy.js';
import { postgresHints } from './error-hints.js';
import { keyValueStatements } from './key-value-statements.js';
import { migrate } from './migrate.js';
import { SCHEMA_VERSION, schemaIdentifier } from './schema.js';
import {
  type PostgresRunStatement,
  prepared,
  type Statement,
  statementRunner,
} from './statement-runner.js';

// Every statement, in one place and readable on its own. `$n` are parameters. The pages
// that take optional bounds are parsed on each call, so that each is planned for its values;
// every other statement is prepared once per connection.
function reads(namespace: string): SqlReads<Statement | string> {
  const ns = schemaIdentifier(namespace);
  const sessionColumns =
    'id, head, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at';
  return {
    // A load is one SELECT, so it reads the head and its checkpoint from one snapshot. The body
    // is a subquery, not a join: once the tables have statistics, the cached generic plan of
    // the join looks the body up by session alone (one row a session, it guesses) and filters
    // the seq, reading every body of a session with thousands; the subquery can only look it
    // up by its whole key.
    loadHead: prepared(`
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at, s.metadata,
             (SELECT b.data FROM ${ns}.bodies b WHERE b.session_id = s.id AND b.seq = s.head) AS data
        FROM ${ns}.sessions s
       WHERE s.id = $1`),
    loadSeq: prepared(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
        FROM ${ns}.checkpoints c JOIN ${ns}.bodies b ON b.session_id = c.session_id AND b.seq = c.seq
       WHERE c.session_id = $1 AND c.seq = $2`),
    loadByKey: prepared(`
      SELECT c.seq, c.parent, c.created_at, c.metadata,
             (SELECT b.data FROM ${ns}.bodies b WHERE b.session_id = c.session_id AND b.seq = c.seq) AS data
        FROM ${ns}.idempotency i
        JOIN ${ns}.checkpoints c ON c.session_id = i.session_id AND c.seq = i.seq
       WHERE i.session_id = $1 AND i.key = $2`),
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
    // A range of the primary key (ids are COLLATE "C", so the range is in byte order), then a
    // sort of that range; planned for the prefix given, so that a prefix that matches most of
    // the catalog walks sessions_by_update instead.
    prefixSessionsFirst: `
      SELECT ${sessionColumns} FROM ${ns}.sessions WHERE id >= $1 AND id < $2
       ORDER BY updated_at DESC, id DESC LIMIT $3`,
    prefixSessionsAfter: `
      SELECT ${sessionColumns} FROM ${ns}.sessions
       WHERE id >= $1 AND id < $2 AND (updated_at, id) < ($3, $4)
       ORDER BY updated_at DESC, id DESC LIMIT $5`,
    exportCheckpoints: prepared(`
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data, coalesce(x.items, '[]') AS transcript,
             (SELECT json_agg(n.needed ORDER BY n.needed) FROM ${ns}.needs n
               WHERE n.session_id = c.session_id AND n.seq = c.seq)::text AS needs
        FROM ${ns}.checkpoints c
        JOIN ${ns}.bodies b ON b.session_id = c.session_id AND b.seq = c.seq
        LEFT JOIN ${ns}.transcripts x ON x.session_id = c.session_id AND x.seq = c.seq
       WHERE c.session_id = $1 AND c.seq > coalesce($2::bigint, 0)
       ORDER BY c.seq LIMIT $3`),
    stateScopes: prepared(`
      SELECT DISTINCT scope FROM ${ns}.state WHERE scope > coalesce($1::text, '')
       ORDER BY scope LIMIT $2`),
  };
}

/**
 * A whole session as one statement: its row first, where the id is free (`ON CONFLICT DO
 * NOTHING`), then the rows of its checkpoints, bodies, transcript items and needs from arrays,
 * each only where the session's row went in. One round trip, one transaction, whatever the
 * number of checkpoints; `imported` is 0 when the id was taken. Values: sessionId, head, head's
 * parent, last seq, count, forkedFrom id and seq, head's metadata, createdAt, updatedAt, head's
 * createdAt, then the checkpoints' seqs, parents, times, metadata, data and transcripts, then
 * one entry per need: the seq that needs, and the seq it needs.
 */
function importNew(namespace: string): Statement {
  const ns = schemaIdentifier(namespace);
  return prepared(`
    WITH s AS (
      INSERT INTO ${ns}.sessions (id, head, head_parent, last_seq, checkpoints, forked_from_id,
                                  forked_from_seq, metadata, created_at, updated_at, head_created_at)
      VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
      ON CONFLICT (id) DO NOTHING
      RETURNING id
    ), checkpoint AS (
      INSERT INTO ${ns}.checkpoints (session_id, seq, parent, created_at, metadata)
      SELECT s.id, u.* FROM s, unnest($12::bigint[], $13::bigint[], $14::bigint[], $15::text[]) AS u
    ), body AS (
      INSERT INTO ${ns}.bodies (session_id, seq, data)
      SELECT s.id, u.* FROM s, unnest($12::bigint[], $16::text[]) AS u
    ), transcript AS (
      INSERT INTO ${ns}.transcripts (session_id, seq, items)
      SELECT s.id, u.seq, u.items FROM s, unnest($12::bigint[], $17::text[]) AS u(seq, items)
       WHERE u.items <> '[]'
    ), needs AS (
      INSERT INTO ${ns}.needs (session_id, seq, needed)
      SELECT s.id, u.* FROM s, unnest($18::bigint[], $19::bigint[]) AS u
    )
    SELECT count(*)::int AS imported FROM s`);
}

/** The values of `importNew` for `input`. */
function importArgs(input: ImportInput): unknown[] {
  const cps = input.checkpoints;
  const row = importedSessionRow(input);
  return [
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
    cps.map((cp) => cp.seq),
    cps.map((cp) => cp.parent),
    cps.map((cp) => cp.createdAt),
    cps.map((cp) => cp.metadata),
    cps.map((cp) => cp.data),
    cps.map((cp) => cp.transcript),
    cps.flatMap((cp) => cp.needs.map(() => cp.seq)),
    cps.flatMap((cp) => cp.needs),
  ];
}

function procedures(namespace: string): SqlProcedures<Statement> {
  const ns = schemaIdentifier(namespace);
  return {
    append: prepared(`SELECT * FROM ${ns}.append($1, $2, $3, $4, $5, $6, $7, $8, $9)`),
    rollback: prepared(`SELECT * FROM ${ns}.rollback($1, $2, $3, $4, $5)`),
    fork: prepared(`SELECT * FROM ${ns}.fork($1, $2, $3, $4)`),
    prune: prepared(`SELECT ${ns}.prune($1, $2) AS removed`),
    delete: prepared(`SELECT ${ns}.delete_session($1) AS deleted`),
  };
}

/**
 * A checkpoint without an idempotency key as one statement, instead of a call of the `append`
 * function, whose PL/pgSQL costs a good part of a call on top of the same writes. The
 * statement writes only where it can go straight through: the session exists and its head is
 * as expected, or the session is new and nobody creates it at the same moment. Anywhere else
 * it writes nothing and returns no row, and `append` (a second statement) decides what
 * happened. It takes the values `append` takes, in the same order; it writes nothing when
 * given a key (`$7`), since a keyed checkpoint must record its key, which only `append` does,
 * nor when given needs (`$9`): one statement reads all its tables as of its start, and a prune
 * that held the session's row until then may have removed a needed checkpoint it still sees;
 * `append` reads them after the row lock.
 */
function appendDirect(namespace: string): Statement {
  const ns = schemaIdentifier(namespace);
  return prepared(`
    WITH moved AS (
      UPDATE ${ns}.sessions s
         SET head_parent = s.head, head = s.last_seq + 1, last_seq = s.last_seq + 1,
             checkpoints = s.checkpoints + 1, metadata = $3, updated_at = $8, head_created_at = $8
       WHERE s.id = $1 AND (NOT $5 OR s.head IS NOT DISTINCT FROM $6::bigint) AND $7::text IS NULL
         AND $9::text = '[]'
      RETURNING s.head AS seq, s.head_parent AS parent
    ), created AS (
      INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata,
                                       created_at, updated_at, head_created_at)
      SELECT $1, 1, NULL, 1, 1, $3, $8, $8, $8
       WHERE NOT EXISTS (SELECT FROM moved) AND (NOT $5 OR $6::bigint IS NULL) AND $7::text IS NULL
         AND $9::text = '[]'
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

/**
 * `n` checkpoints that waited for a connection, each on a session of its own, as one statement:
 * `appendDirect` over a `VALUES` list of their values (call i's values of append are
 * `$(9i+1)` to `$(9i+9)`), each sent as a parameter of its own, so that no payload is escaped
 * into an array literal for the server to parse back. Calls with needs are never among them
 * (see appendDirect): they go alone. Like it, it writes only the calls that
 * can go straight through, and returns a row for each of those; a call that gets none (a
 * conflict, a replayed key, a session created meanwhile) goes alone afterwards, through
 * `append`. A keyed call goes straight through when its key is not recorded yet; two with the
 * same key at once meet at the key's primary key, which fails the whole statement, and then
 * every call goes alone.
 */
function appendSet(namespace: string, n: number): Statement {
  const ns = schemaIdentifier(namespace);
  const rows = Array.from({ length: n }, (_, i) => {
    const $ = (k: number) => `$${9 * i + k}`;
    return `(${$(1)}::text, ${$(2)}::text, ${$(3)}::text, ${$(4)}::text, ${$(5)}::boolean, ${$(6)}::bigint, ${$(7)}::text, ${$(8)}::bigint, ${$(9)}::text)`;
  });
  return prepared(`
    WITH input (id, data, metadata, transcript, check_head, expected, key, now, needs) AS (
      VALUES ${rows.join(',\n             ')}
    ), moved AS (
      UPDATE ${ns}.sessions s
         SET head_parent = s.head, head = s.last_seq + 1, last_seq = s.last_seq + 1,
             checkpoints = s.checkpoints + 1, metadata = i.metadata, updated_at = i.now,
             head_created_at = i.now
        FROM input i
       WHERE s.id = i.id AND (NOT i.check_head OR s.head IS NOT DISTINCT FROM i.expected)
         AND NOT EXISTS (SELECT FROM ${ns}.idempotency k WHERE k.session_id = i.id AND k.key = i.key)
      RETURNING s.id, s.head AS seq, s.head_parent AS parent
    ), created AS (
      INSERT INTO ${ns}.sessions AS s (id, head, head_parent, last_seq, checkpoints, metadata,
                                       created_at, updated_at, head_created_at)
      SELECT i.id, 1, NULL, 1, 1, i.metadata, i.now, i.now, i.now FROM input i
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
}

/**
 * Whether the server refused a whole statement, which it then rolled back: an error of
 * severity ERROR, not a broken connection (whose outcome nobody knows).
 */
const refusedWhole = (err: unknown) => err instanceof pg.DatabaseError && err.severity === 'ERROR';

const ignore = () => {};

/** The PostgreSQL backend (see `postgres()`). */
export class PostgresBackend extends SqlProcedureBackend<Statement | string> {
  readonly name = 'postgres';
  readonly namespace: string;
  /** The pool queries run on. */
  readonly pool: pg.Pool;
  readonly #owned: boolean;
  /**
   * What to do about a failure of the server's or the driver's: a refusal's remedy, or that the
   * URL names another kind of server. A function of its own rather than a method on private
   * state, so that a backend made with `Object.create(backend)` (a wrapper) still has it.
   */
  readonly errorHint: ErrorHint;
  readonly #ready: Promise<void>;
  readonly #run: PostgresRunStatement;
  readonly #appendDirect: Statement;
  /** The statements that append n calls at once, by n. */
  readonly #appendSets = new Map<number, Statement>();
  readonly #importNew: Statement;
  readonly #removeSession: string;

  constructor(options: PostgresOptions) {
    const connection = connect(options);
    const ns = schemaIdentifier(connection.namespace);
    super({
      reads: reads(connection.namespace),
      state: keyValueStatements(`${ns}.state`, ['scope', 'key']),
      procedures: procedures(connection.namespace),
    });
    this.pool = connection.pool;
    this.namespace = connection.namespace;
    this.#owned = connection.owned;
    this.errorHint = postgresHints(connection.address, connection.defaultDatabase);
    this.#appendDirect = appendDirect(this.namespace);
    this.#importNew = importNew(this.namespace);
    this.#removeSession = `SELECT ${ns}.delete_session($1)`;
    this.#ready = migrate(this.pool, this.namespace, connection.existing);
    // Reported by the first call that awaits it, not as an unhandled rejection.
    this.#ready.catch(() => {});
    this.#run = statementRunner(this.pool, connection.preparedStatements, this.#ready);
    if (connection.groupCommit) this.#batchAppendsOn(this.pool);
  }

  #batchAppendsOn(pool: pg.Pool): void {
    const size = (pool as { options?: { max?: number } }).options?.max ?? 10;
    this.batchAppends({
      // The pool's counts change only once a statement reaches it, after a few awaits: the
      // statements this backend has started count from the moment they start.
      busy: () =>
        this.statementsInFlight >= size ||
        pool.waitingCount > 0 ||
        (pool.idleCount === 0 && pool.totalCount >= size),
      lease: async () => {
        const client = await pool.connect();
        // A leased connection that breaks reports to its listeners as well as to the query in
        // flight, which fails the batch; without one, the process would crash.
        client.on('error', ignore);
        return {
          together: (inputs) => this.#together(inputs, client),
          release: (err) => {
            client.off('error', ignore);
            client.release(err instanceof Error ? err : undefined);
          },
        };
      },
    });
  }

  #appendSetOf(n: number): Statement {
    let statement = this.#appendSets.get(n);
    if (statement === undefined) {
      statement = appendSet(this.namespace, n);
      this.#appendSets.set(n, statement);
    }
    return statement;
  }

  /**
   * The first call of each session in `inputs` through `appendSet` on `client`; every other
   * call, each with needs (see appendDirect), and each that the statement did not write, goes
   * alone afterwards.
   */
  async #together(
    inputs: AppendInput[],
    client: pg.PoolClient,
  ): Promise<BatchOutcome<AppendResult>[]> {
    const first = new Map<string, number>();
    for (const [i, input] of inputs.entries()) {
      if (input.needs.length === 0 && !first.has(input.sessionId)) first.set(input.sessionId, i);
    }
    const outcomes: BatchOutcome<AppendResult>[] = inputs.map(() => AGAIN);
    if (first.size === 0) return outcomes;
    let rows: { id: string; seq: number; parent: number | null }[];
    try {
      const set = [...first.values()].map((i) => inputs[i]!);
      ({ rows } = await this.#run(
        this.#appendSetOf(set.length),
        set.flatMap(appendProcedureArgs),
        client,
      ));
    } catch (err) {
      if (refusedWhole(err)) return outcomes;
      throw err;
    }
    for (const row of rows) {
      outcomes[first.get(row.id)!] = {
        value: { status: 'written', seq: row.seq, parent: row.parent },
      };
    }
    return outcomes;
  }

  /**
   * Resolves once the schema is migrated (or, with `create: false`, found at this version);
   * rejects with SCHEMA when it cannot be, or NOT_FOUND when `create: false` found no store.
   */
  ready(): Promise<void> {
    return this.#ready;
  }

  protected execute<Row>(
    statement: Statement | string,
    values: unknown[],
  ): Promise<SqlResult<Row>> {
    return this.#run(statement, values);
  }

  protected override async appendAlone(input: AppendInput): Promise<AppendResult> {
    // A checkpoint with a key or with needs is for the function alone (see appendDirect).
    if (input.idempotencyKey === undefined && input.needs.length === 0) {
      const direct = await this.appendWith(this.#appendDirect, input);
      if (direct) return direct;
    }
    return super.appendAlone(input);
  }

  /**
   * One statement where the id is free (see importNew). To replace a session: remove it and
   * insert the new one in one transaction, on one connection.
   */
  async importSession(input: ImportInput): Promise<'imported' | 'exists'> {
    const args = importArgs(input);
    const { rows } = await this.execute<{ imported: number }>(this.#importNew, args);
    if (rows[0]!.imported > 0) return 'imported';
    if (!input.replace) return 'exists';
    const client = await this.pool.connect();
    client.on('error', ignore);
    let failure: Error | undefined;
    try {
      await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
      await client.query(this.#removeSession, [input.sessionId]);
      await this.#run(this.#importNew, args, client);
      await client.query('COMMIT');
      return 'imported';
    } catch (err) {
      failure = err as Error;
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    } finally {
      client.off('error', ignore);
      client.release(failure);
    }
  }

  /**
   * Drop the schema when ckpt created it; else drop ckpt's tables and functions from it,
   * leaving the schema and whatever else it holds (see destroy.ts).
   */
  async destroy(): Promise<void> {
    await this.#ready;
    await destroySchema(this.pool, this.namespace);
  }

  /** The schema version, the server's durability settings, and the privileges a store needs. */
  async diagnose(): Promise<Diagnosis[]> {
    await this.#ready;
    const ns = schemaIdentifier(this.namespace);
    const { rows: meta } = await this.pool.query(
      `SELECT value FROM ${ns}.meta WHERE key = 'schema_version'`,
    );
    const { rows: settings } = await this.pool.query(
      "SELECT current_setting('server_version') AS version, current_setting('fsync') AS fsync, current_setting('synchronous_commit') AS sync",
    );
    const { version, fsync, sync } = settings[0] as Record<string, string>;
    const durable = fsync === 'on' && sync !== 'off';
    const found: Diagnosis[] = [
      {
        check: 'schema',
        status: 'ok',
        detail: `PostgreSQL ${version}, schema '${this.namespace}' at version ${meta[0]?.value} (this @ckpt/postgres writes ${SCHEMA_VERSION})`,
      },
      {
        check: 'durability',
        status: durable ? 'ok' : 'warn',
        detail: `fsync = ${fsync}, synchronous_commit = ${sync}: ${
          durable
            ? 'a call that resolved survives a crash of the server'
            : 'the last calls that resolved may be lost when the server crashes'
        }`,
        fix: 'set fsync = on and synchronous_commit = on in postgresql.conf (or ALTER SYSTEM), then reload',
      },
    ];
    const { rows: lacking } = await this.pool.query(
      `SELECT c.relname AS name FROM pg_class c JOIN pg_namespace n ON n.oid = c.relnamespace
        WHERE n.nspname = $1 AND c.relkind = 'r'
          AND NOT has_table_privilege(c.oid, 'SELECT, INSERT, UPDATE, DELETE')
       UNION ALL
       SELECT p.oid::regprocedure::text FROM pg_proc p JOIN pg_namespace n ON n.oid = p.pronamespace
        WHERE n.nspname = $1 AND NOT has_function_privilege(p.oid, 'EXECUTE')`,
      [this.namespace],
    );
    found.push({
      check: 'privileges',
      status: lacking.length === 0 ? 'ok' : 'fail',
      detail:
        lacking.length === 0
          ? 'this user may read and write every table and run every function of the schema'
          : `this user may not write (or run) ${lacking.map((r) => r.name).join(', ')}; it can read at most`,
      fix: `GRANT SELECT, INSERT, UPDATE, DELETE ON ALL TABLES IN SCHEMA ${ns} TO <user>; GRANT EXECUTE ON ALL FUNCTIONS IN SCHEMA ${ns} TO <user> (or open the store as the schema's owner)`,
    });
    return found;
  }

  async close(): Promise<void> {
    await this.#ready.catch(() => {});
    if (this.#owned && !this.pool.ended) await this.pool.end();
  }
}
