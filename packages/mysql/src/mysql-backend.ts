/**
 * The native MySQL / MariaDB backend. Each mutation is one CALL of a stored procedure (one
 * transaction), but an import, which inserts a whole session in one transaction of its own
 * statements; each read is one statement; each statement is one round trip once its
 * connection has prepared it (see statement-runner.ts). Deadlocks and lock-wait timeouts,
 * after which the server has rolled the transaction back, are run again.
 */
import {
  type AppendInput,
  type AppendResult,
  type Diagnosis,
  type ErrorHint,
  errorCode,
  type ImportInput,
} from '@ckpt/core/adapter';
import {
  AGAIN,
  type AppendRow,
  appendProcedureArgs,
  appendResultFromRow,
  type BatchAppendRow,
  type BatchOutcome,
  batchAppendOutcomeFromRow,
  importedSessionRow,
  SqlProcedureBackend,
  type SqlProcedures,
  type SqlReads,
  type SqlResult,
} from '@ckpt/core/sql';
import type { Pool, PoolConnection } from 'mysql2/promise';
import { connect, type MysqlOptions } from './connection.js';
import { destroyNamespace } from './destroy.js';
import { mysqlHints } from './error-hints.js';
import { keyValueStatements, statements } from './key-value-statements.js';
import { migrate } from './migrate.js';
import { SCHEMA_VERSION, tables } from './schema.js';
import {
  type MysqlRunStatement,
  type MysqlStatement,
  statement,
  statementRunner,
} from './statement-runner.js';

function reads(ns: string): SqlReads<MysqlStatement> {
  const t = tables(ns);
  const sessionColumns =
    'id, head, checkpoints, forked_from_id, forked_from_seq, metadata, created_at, updated_at';
  const text: SqlReads<string> = {
    // A load is one SELECT, so it reads the head and its checkpoint from one snapshot.
    loadHead: `
      SELECT s.head AS seq, s.head_parent AS parent, s.head_created_at AS created_at, s.metadata, b.data
        FROM ${t.sessions} s JOIN ${t.bodies} b ON b.session_id = s.id AND b.seq = s.head
       WHERE s.id = $1`,
    loadSeq: `
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
        FROM ${t.checkpoints} c JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
       WHERE c.session_id = $1 AND c.seq = $2`,
    loadByKey: `
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data
        FROM ${t.idempotency} i
        JOIN ${t.checkpoints} c ON c.session_id = i.session_id AND c.seq = i.seq
        JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
       WHERE i.session_id = $1 AND i.k = $2`,
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
    // A range of the primary key (ids are VARBINARY, so the range is in byte order), then a
    // sort of that range.
    prefixSessionsFirst: `
      SELECT ${sessionColumns} FROM ${t.sessions} WHERE id >= $1 AND id < $2
       ORDER BY updated_at DESC, id DESC LIMIT $3`,
    prefixSessionsAfter: `
      SELECT ${sessionColumns} FROM ${t.sessions}
       WHERE id >= $1 AND id < $2 AND (updated_at < $3 OR (updated_at = $3 AND id < $4))
       ORDER BY updated_at DESC, id DESC LIMIT $5`,
    exportCheckpoints: `
      SELECT c.seq, c.parent, c.created_at, c.metadata, b.data, COALESCE(x.items, '[]') AS transcript,
             (SELECT CAST(JSON_ARRAYAGG(n.needed) AS CHAR) FROM ${t.needs} n
               WHERE n.session_id = c.session_id AND n.seq = c.seq) AS needs
        FROM ${t.checkpoints} c
        JOIN ${t.bodies} b ON b.session_id = c.session_id AND b.seq = c.seq
        LEFT JOIN ${t.transcripts} x ON x.session_id = c.session_id AND x.seq = c.seq
       WHERE c.session_id = $1 AND c.seq > COALESCE($2, 0)
       ORDER BY c.seq LIMIT $3`,
    stateScopes: `
      SELECT DISTINCT scope FROM ${t.state} WHERE scope > COALESCE($1, '') ORDER BY scope LIMIT $2`,
  };
  return statements(text);
}

// Rows of one multi-row INSERT of an import, by the bytes of their values: far below any
// server's max_allowed_packet, even escaped. A row larger than that goes alone, prepared.
const IMPORT_CHUNK_BYTES = 1024 * 1024;

/** `rows` in runs of at most IMPORT_CHUNK_BYTES (a larger row alone). */
function chunks<T>(rows: T[], bytes: (row: T) => number): T[][] {
  const out: T[][] = [];
  let run: T[] = [];
  let size = 0;
  for (const row of rows) {
    const b = bytes(row);
    if (run.length > 0 && size + b > IMPORT_CHUNK_BYTES) {
      out.push(run);
      run = [];
      size = 0;
    }
    run.push(row);
    size += b;
  }
  if (run.length > 0) out.push(run);
  return out;
}

const DUPLICATE_ENTRY = 'ER_DUP_ENTRY';

/** The checkpoints that waited for a connection, as one CALL of `append_batch`. */
function appendBatch(ns: string): MysqlStatement {
  return statement(`CALL ${ns}_append_batch($1)`);
}

// Room in a packet for what is not the batch: the statement's text and the protocol's framing.
const PACKET_SLACK = 64 * 1024;

// A call of a batch that waited too long for a lock undid only its own savepoint; alone, it
// goes through the runner, which retries that (a deadlock fails the whole batch, which the
// runner runs again).
const AGAIN_ALONE = new Set(['1205']);

/** Session ids as the server orders them: by UTF-8 bytes. */
const byIdBytes = (a: AppendInput, b: AppendInput) =>
  Buffer.compare(Buffer.from(a.sessionId), Buffer.from(b.sessionId));

function procedures(ns: string): SqlProcedures<MysqlStatement> {
  return statements({
    append: `CALL ${ns}_append($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
    rollback: `CALL ${ns}_rollback($1, $2, $3, $4, $5)`,
    fork: `CALL ${ns}_fork($1, $2, $3, $4)`,
    prune: `CALL ${ns}_prune($1, $2)`,
    delete: `CALL ${ns}_delete($1)`,
  });
}

/** The MySQL / MariaDB backend (see `mysql()`). */
export class MysqlBackend extends SqlProcedureBackend<MysqlStatement> {
  readonly name = 'mysql';
  readonly namespace: string;
  /** The promise pool queries run on. */
  readonly pool: Pool;
  readonly #owned: boolean;
  /**
   * What to do about a failure of the server's or the driver's: a refusal's remedy, or that the
   * URL names another kind of server. A function of its own rather than a method on private
   * state, so that a backend made with `Object.create(backend)` (a wrapper) still has it.
   */
  readonly errorHint: ErrorHint;
  readonly #ready: Promise<number>;
  readonly #run: MysqlRunStatement;
  readonly #append: MysqlStatement;
  #closed = false;

  constructor(options: MysqlOptions) {
    const connection = connect(options);
    const calls = procedures(connection.namespace);
    super({
      reads: reads(connection.namespace),
      state: keyValueStatements(tables(connection.namespace).state, ['scope', 'k']),
      procedures: calls,
    });
    this.#append = calls.append;
    this.pool = connection.pool;
    this.namespace = connection.namespace;
    this.#owned = connection.owned;
    this.errorHint = mysqlHints(connection.address);
    this.#ready = migrate(this.pool, this.namespace, connection.existing);
    // Reported by the first call that awaits it, not as an unhandled rejection.
    this.#ready.catch(() => {});
    this.#run = statementRunner(this.pool, connection.preparedStatements, this.#ready);
    if (connection.groupCommit) this.#batchAppendsOn(this.pool, connection.poolSize);
  }

  #batchAppendsOn(pool: Pool, size: number): void {
    const batch = appendBatch(this.namespace);
    const waiting = (pool as { pool?: { _connectionQueue?: { length: number } } }).pool
      ?._connectionQueue;
    this.batchAppends({
      // The statements this backend has started count from the moment they start; the pool's
      // queue (mysql2 keeps no public count) holds those of anyone else who shares it.
      busy: () => this.statementsInFlight >= size || (waiting?.length ?? 0) > 0,
      lease: async () => {
        const conn = await pool.getConnection();
        return {
          together: (inputs) => this.#together(inputs, batch, conn),
          release: (err) => (err === undefined ? conn.release() : conn.destroy()),
        };
      },
    });
  }

  /** Send `inputs` as one CALL of `batch` on `conn`; one at a time where they would not fit a packet. */
  async #together(
    inputs: AppendInput[],
    batch: MysqlStatement,
    conn: PoolConnection,
  ): Promise<BatchOutcome<AppendResult>[]> {
    const alone = async (input: AppendInput): Promise<BatchOutcome<AppendResult>> => {
      try {
        const { rows } = await this.#run<AppendRow>(this.#append, appendProcedureArgs(input), conn);
        return { value: appendResultFromRow(rows[0]!) };
      } catch (err) {
        return { error: err };
      }
    };
    const ordered = inputs
      .map((input, i) => ({ input, i }))
      .sort((a, b) => byIdBytes(a.input, b.input));
    const calls = JSON.stringify(
      ordered.map(({ input }) =>
        appendProcedureArgs(input).map((v) => (typeof v === 'boolean' ? +v : v)),
      ),
    );
    if (inputs.length === 1 || Buffer.byteLength(calls) + PACKET_SLACK > (await this.#ready)) {
      const outcomes: BatchOutcome<AppendResult>[] = [];
      for (const input of inputs) outcomes.push(await alone(input));
      return outcomes;
    }
    const { rows } = await this.#run<BatchAppendRow>(batch, [calls], conn);
    const outcomes = new Array<BatchOutcome<AppendResult>>(inputs.length);
    for (const [n, { i }] of ordered.entries()) {
      const outcome = batchAppendOutcomeFromRow(rows[n]!);
      outcomes[i] =
        'error' in outcome && AGAIN_ALONE.has(errorCode(outcome.error)) ? AGAIN : outcome;
    }
    return outcomes;
  }

  /**
   * Resolves once the tables are migrated (or, with `create: false`, found at this version);
   * rejects with SCHEMA or UNSUPPORTED when they cannot be, or NOT_FOUND when `create: false`
   * found no store.
   */
  async ready(): Promise<void> {
    await this.#ready;
  }

  protected execute<Row>(statement: MysqlStatement, values: unknown[]): Promise<SqlResult<Row>> {
    return this.#run(statement, values);
  }

  /**
   * One transaction on one connection: lock (or find absent) the session's row, remove what
   * the id held when replacing it, insert the checkpoints' rows a run at a time, then the
   * session's row.
   */
  async importSession(input: ImportInput): Promise<'imported' | 'exists'> {
    await this.#ready;
    const t = tables(this.namespace);
    const id = input.sessionId;
    const cps = input.checkpoints;
    const conn = await this.pool.getConnection();
    const insert = async (table: string, columns: string, rows: unknown[][]) => {
      const one = `(${columns
        .split(',')
        .map(() => '?')
        .join(', ')})`;
      for (const run of chunks(rows, (row) =>
        row.reduce<number>((n, v) => n + (typeof v === 'string' ? v.length : 8), 0),
      )) {
        const sql = `INSERT INTO ${table} (${columns}) VALUES ${run.map(() => one).join(', ')}`;
        // Alone, a row goes prepared (sent as it is); a run goes as text, one statement.
        if (run.length === 1) await conn.execute(sql, run[0] as never);
        else await conn.query(sql, run.flat());
      }
    };
    let failure: unknown;
    try {
      await conn.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      await conn.query('START TRANSACTION');
      const [found] = (await conn.query(`SELECT head FROM ${t.sessions} WHERE id = ? FOR UPDATE`, [
        id,
      ])) as unknown as [unknown[]];
      if (found.length > 0) {
        if (!input.replace) {
          await conn.query('ROLLBACK');
          return 'exists';
        }
        for (const table of [t.checkpoints, t.bodies, t.transcripts, t.idempotency, t.needs]) {
          await conn.query(`DELETE FROM ${table} WHERE session_id = ?`, [id]);
        }
        await conn.query(`DELETE FROM ${t.sessions} WHERE id = ?`, [id]);
      }
      await insert(
        t.checkpoints,
        'session_id, seq, parent, created_at, metadata',
        cps.map((cp) => [id, cp.seq, cp.parent, cp.createdAt, cp.metadata]),
      );
      await insert(
        t.bodies,
        'session_id, seq, data',
        cps.map((cp) => [id, cp.seq, cp.data]),
      );
      await insert(
        t.transcripts,
        'session_id, seq, items',
        cps.filter((cp) => cp.transcript !== '[]').map((cp) => [id, cp.seq, cp.transcript]),
      );
      await insert(
        t.needs,
        'session_id, seq, needed',
        cps.flatMap((cp) => cp.needs.map((needed) => [id, cp.seq, needed])),
      );
      const row = importedSessionRow(input);
      const columns = Object.keys(row);
      await conn.query(
        `INSERT INTO ${t.sessions} (${columns.join(', ')}) VALUES (${columns.map(() => '?').join(', ')})`,
        Object.values(row),
      );
      await conn.query('COMMIT');
      return 'imported';
    } catch (err) {
      failure = err;
      await conn.query('ROLLBACK').catch(() => {});
      if (errorCode(err) !== DUPLICATE_ENTRY) throw err;
    } finally {
      if (failure === undefined || errorCode(failure) === DUPLICATE_ENTRY) conn.release();
      else conn.destroy();
    }
    // Another writer created the session between the lock (which found no row) and the
    // insert: it exists now, and a replace locks and removes it on the next try.
    return input.replace ? this.importSession(input) : 'exists';
  }

  /** The schema version, the server's durability setting, and the privileges a store needs. */
  async diagnose(): Promise<Diagnosis[]> {
    await this.#ready;
    const t = tables(this.namespace);
    const query = async (sql: string) =>
      ((await this.pool.query(sql)) as unknown as [Record<string, unknown>[]])[0];
    const [meta] = await query(`SELECT value FROM ${t.meta} WHERE k = 'schema_version'`);
    const [server] = await query(
      'SELECT VERSION() AS version, @@innodb_flush_log_at_trx_commit AS flush, DATABASE() AS db',
    );
    const flush = Number(server!.flush);
    const found: Diagnosis[] = [
      {
        check: 'schema',
        status: 'ok',
        detail: `${server!.version}, namespace '${this.namespace}' at version ${meta?.value} (this @ckpt/mysql writes ${SCHEMA_VERSION})`,
      },
      {
        check: 'durability',
        status: flush === 1 ? 'ok' : 'warn',
        detail: `innodb_flush_log_at_trx_commit = ${flush}: ${
          flush === 1
            ? 'a call that resolved survives a crash of the server'
            : 'up to about a second of calls that resolved may be lost when the server crashes'
        }`,
        fix: 'SET GLOBAL innodb_flush_log_at_trx_commit = 1 (and in the server configuration)',
      },
    ];
    const grants = (await query('SHOW GRANTS')).map((row) => String(Object.values(row)[0]));
    const db = String(server!.db);
    const needed = ['SELECT', 'INSERT', 'UPDATE', 'DELETE', 'EXECUTE'];
    const lacking = needed.filter(
      (privilege) =>
        !grants.some(
          (grant) =>
            (grant.includes(' ON *.* ') || grant.includes(` ON \`${db}\`.* `)) &&
            (grant.includes('ALL PRIVILEGES') ||
              new RegExp(`\\b${privilege}\\b`).test(grant.split(' ON ')[0]!)),
        ),
    );
    found.push({
      check: 'privileges',
      status: lacking.length === 0 ? 'ok' : 'warn',
      detail:
        lacking.length === 0
          ? `this user has ${needed.join(', ')} on the database ${db}`
          : `no grant on the database ${db} (or all databases) gives this user ${lacking.join(', ')}; grants on single tables or routines were not read`,
      fix: `GRANT SELECT, INSERT, UPDATE, DELETE, EXECUTE ON \`${db}\`.* TO <user> (the @ckpt/mysql README lists what a migration needs besides)`,
    });
    return found;
  }

  /** Drop the namespace's procedures and tables (see destroy.ts). */
  async destroy(): Promise<void> {
    await this.#ready;
    await destroyNamespace(this.pool, this.namespace);
  }

  async close(): Promise<void> {
    if (this.#closed) return;
    this.#closed = true;
    await this.#ready.catch(() => {});
    if (this.#owned) await this.pool.end();
  }
}
