/**
 * MySQL's and MariaDB's change log (schema step 10), as watch() reads it. Triggers write its
 * rows in the transactions that make the changes; InnoDB numbers them as they are inserted,
 * not as they commit, so a reader that sees row 7 may not see row 6 yet: its transaction is
 * still running, or it rolled back (a call refused after its first statement, as a conflict).
 * The reader takes the rows after its position while they follow on without a gap; at a gap it
 * reads the same rows again with a locking read under READ COMMITTED, which waits for every
 * transaction that inserted one of them and has not ended (and takes no gap locks, so writers
 * go on). What that read does not find is gone for good. A position is a row's id.
 *
 * That rests on the ids of the rows a running transaction holds being in the index, where a
 * locking read finds them, before any later id is handed out: InnoDB holds the table's
 * AUTO-INC lock through each trigger's INSERT ... SELECT under innodb_autoinc_lock_mode 0 or 1
 * (MariaDB's default). Under 2 (MySQL 8's default) it does not, and an id may be taken a moment
 * before its row is there: a gap is then passed over only once it has been one for GRACE_MS.
 */
import {
  type ChangeKind,
  type ChangeLog,
  type ChangesPage,
  logPosition,
  notThisLog,
  readLogPosition,
  type StoredChange,
} from '@ckpt/core/adapter';
import type { Pool } from 'mysql2/promise';
import { PLAIN_ROWS } from './runner.js';
import { tables } from './schema.js';

/** How often watchers read the log: it has no wakes. */
const POLL_MS = 50;
/** The changes the log keeps at least; a watcher further behind must reload (EXPIRED). */
export const KEPT_CHANGES = 10_000;
/** Each backend trims the log after this many of its own writes. */
export const TRIM_EVERY = 1_000;
/** How long a gap must have been one before it is passed over, under innodb_autoinc_lock_mode 2. */
const GRACE_MS = 500;

interface ChangeRow {
  id: number | string;
  session_id: string;
  kind: ChangeKind;
  seq: number | string | null;
}

interface PageRow extends ChangeRow {
  last: number | string | null;
  trimmed: string | null;
}

/** The change log of namespace `ns` on `pool`, read once `ready` (the migration) resolved. */
export function mysqlChangeLog(
  pool: Pool,
  ns: string,
  ready: Promise<unknown>,
): ChangeLog & { changed(): void } {
  const t = tables(ns);
  const columns = 'id, CONVERT(session_id USING utf8mb4) AS session_id, kind, seq';
  // The page and the bounds from one snapshot: a trim that removed rows of the page shows.
  const page = `
    SELECT NULL AS id, NULL AS session_id, NULL AS kind, NULL AS seq,
           (SELECT MAX(id) FROM ${t.changes}) AS last,
           (SELECT value FROM ${t.meta} WHERE k = 'changes_trimmed_through') AS trimmed
    UNION ALL
    (SELECT ${columns}, NULL, NULL FROM ${t.changes} WHERE id > ? ORDER BY id LIMIT ?)`;
  const trimmedNow = `SELECT value AS trimmed FROM ${t.meta} WHERE k = 'changes_trimmed_through'`;

  const rowsOf = async <Row>(sql: string, values: unknown[]) =>
    ((await pool.query({ sql, values, ...PLAIN_ROWS })) as unknown as [Row[]])[0];

  /** `sql` as a locking read under READ COMMITTED: it waits for the rows' running writers. */
  const locking = async <Row>(sql: string, values: unknown[]): Promise<Row[]> => {
    const conn = await pool.getConnection();
    try {
      // For the next transaction only: the SELECT, which autocommit makes one.
      await conn.query('SET TRANSACTION ISOLATION LEVEL READ COMMITTED');
      return ((await conn.query({ sql, values, ...PLAIN_ROWS })) as unknown as [Row[]])[0];
    } finally {
      conn.release();
    }
  };

  let lockMode: Promise<number> | undefined;
  const graceNeeded = async () => {
    lockMode ??= rowsOf<{ mode: number | string }>(
      'SELECT @@innodb_autoinc_lock_mode AS mode',
      [],
    ).then(([row]) => Number(row?.mode ?? 2));
    return (await lockMode) === 2;
  };
  /** Under lock mode 2: each gap seen, and when it was first seen. */
  const gapsSeen = new Map<number, number>();

  /**
   * `rows` (ids above `from`, ascending, after a locking read) up to the first gap that may yet
   * fill: under lock mode 2, one not a gap for GRACE_MS yet.
   */
  const settled = async (from: number, rows: ChangeRow[]): Promise<ChangeRow[]> => {
    if (!(await graceNeeded())) return rows;
    const now = Date.now();
    let expected = from + 1;
    for (const [index, row] of rows.entries()) {
      for (; expected < Number(row.id); expected++) {
        const seen = gapsSeen.get(expected) ?? now;
        gapsSeen.set(expected, seen);
        if (now - seen < GRACE_MS) return rows.slice(0, index);
      }
      expected = Number(row.id) + 1;
    }
    for (const id of gapsSeen.keys()) if (id < expected) gapsSeen.delete(id);
    return rows;
  };

  /** The log's end now, once every transaction that inserted a row up to it has ended. */
  const end = async (last: number): Promise<number> => {
    if (last === 0) return 0;
    if (await graceNeeded()) await new Promise((resolve) => setTimeout(resolve, GRACE_MS));
    await locking(`SELECT COUNT(*) AS n FROM ${t.changes} WHERE id <= ? LOCK IN SHARE MODE`, [
      last,
    ]);
    return last;
  };

  // One trim at a time, after every TRIM_EVERY writes of this backend; a failed one waits for
  // the next (the log only keeps more meanwhile).
  let writes = 0;
  let trimming = false;
  const trim = () => {
    if (trimming) return;
    trimming = true;
    pool
      .query(`CALL ${ns}_trim_changes(?)`, [KEPT_CHANGES])
      .catch(() => {})
      .finally(() => {
        trimming = false;
      });
  };

  return {
    changesPollMs: POLL_MS,

    async changes({ after, limit }): Promise<ChangesPage | 'expired'> {
      const from = after === null ? 0 : Number(readLogPosition(after)[0]);
      await ready;
      const read = await rowsOf<PageRow>(page, [from, after === null ? 0 : limit]);
      const bounds = read.find((row) => row.id === null);
      const found = read.filter((row) => row.id !== null);
      const last = Number(bounds?.last ?? 0);
      if (after === null) return { changes: [], position: logPosition(await end(last)) };
      if (from > last) throw notThisLog(after);
      if (from < Number(bounds?.trimmed ?? 0)) return 'expired';
      let rows: ChangeRow[] = found.sort((a, b) => Number(a.id) - Number(b.id));
      const top = rows.at(-1);
      if (top !== undefined && Number(top.id) - from !== rows.length) {
        // A gap: read again, waiting for the writers still running.
        rows = await locking<ChangeRow>(
          `SELECT ${columns} FROM ${t.changes} WHERE id > ? AND id <= ? ORDER BY id LOCK IN SHARE MODE`,
          [from, top.id],
        );
        // A trim since the first read would have taken rows this one missed.
        const [now] = await rowsOf<{ trimmed: string | null }>(trimmedNow, []);
        if (from < Number(now?.trimmed ?? 0)) return 'expired';
        rows = await settled(from, rows);
      }
      const changes = rows.map(toChange);
      return { changes, position: changes.at(-1)?.position ?? after };
    },

    changed() {
      writes++;
      if (writes % TRIM_EVERY === 0) trim();
    },
  };
}

function toChange(row: ChangeRow): StoredChange {
  return {
    position: logPosition(row.id),
    sessionId: row.session_id,
    kind: row.kind,
    seq: row.seq === null ? null : Number(row.seq),
  };
}
