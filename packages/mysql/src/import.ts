/**
 * The MySQL / MariaDB backend's import: one transaction of plain statements on one connection,
 * which locks (or finds absent) the session's row, removes what the id held when replacing it,
 * and inserts the checkpoints' rows a run at a time, then the session's row.
 */
import { errorCode, type ImportInput, storedBytesOf } from '@ckpt/core/adapter';
import { importedPins, importedSessionRow } from '@ckpt/core/sql';
import type { Pool } from 'mysql2/promise';
import type { backendStatements } from './statements.js';

/** What an import runs on. */
export interface MysqlImporting {
  pool: Pool;
  statements: ReturnType<typeof backendStatements>['imports'];
  /** The largest packet the server takes, once the migration has found it. */
  packetBytes: Promise<number>;
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

/** One transaction on one connection (see importStatements). */
export async function importSession(
  importing: MysqlImporting,
  input: ImportInput,
): Promise<'imported' | 'exists'> {
  await importing.packetBytes;
  const sql = importing.statements;
  const id = input.sessionId;
  const cps = input.checkpoints;
  const conn = await importing.pool.getConnection();
  const insert = async (into: { table: string; columns: string }, rows: unknown[][]) => {
    for (const run of chunks(rows, (row) =>
      row.reduce<number>(
        (n, v) => n + (typeof v === 'string' || Buffer.isBuffer(v) ? v.length : 8),
        0,
      ),
    )) {
      const text = sql.insert(into.table, into.columns, run.length);
      // Alone, a row goes prepared (sent as it is); a run goes as text, one statement.
      if (run.length === 1) await conn.execute(text, run[0] as never);
      else await conn.query(text, run.flat());
    }
  };
  let failure: unknown;
  try {
    await conn.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
    await conn.query('START TRANSACTION');
    const [found] = (await conn.query(sql.lockSession, [id])) as unknown as [unknown[]];
    if (found.length > 0) {
      if (!input.replace) {
        await conn.query('ROLLBACK');
        return 'exists';
      }
      for (const statement of sql.removeSession) await conn.query(statement, [id]);
    }
    await insert(
      sql.rows.checkpoints,
      cps.map((cp) => [id, cp.seq, cp.parent, cp.createdAt, cp.metadata]),
    );
    await insert(
      sql.rows.bodies,
      cps.map((cp) => [id, cp.seq, storedBytesOf(cp.data)]),
    );
    await insert(
      sql.rows.transcripts,
      cps
        .filter((cp) => cp.transcript !== '[]')
        .map((cp) => [id, cp.seq, storedBytesOf(cp.transcript)]),
    );
    await insert(
      sql.rows.needs,
      cps.flatMap((cp) => cp.needs.map((needed) => [id, cp.seq, needed])),
    );
    await insert(
      sql.rows.pins,
      importedPins(input).map((pin) => [id, pin.seq, pin.note]),
    );
    const row = importedSessionRow(input);
    await conn.query(sql.insertSession(Object.keys(row)), Object.values(row));
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
  return input.replace ? importSession(importing, input) : 'exists';
}
