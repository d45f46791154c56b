/**
 * A change log in a table whose ids come in the order the changes commit (SQLite, which
 * commits one writer at a time): a watcher reads the rows above the id it has, and the meta row
 * that says up to which id the log let go tells it when what followed its position is gone.
 */
import type { ChangeKind, ChangeLog, ChangesPage } from '../adapter/backend.js';
import { logPosition, notThisLog, readLogPosition } from '../adapter/change-positions.js';
import type { RunStatement } from './run.js';
import type { SqlStatement } from './statement.js';

/** The two reads of an id-ordered change log. */
export interface IdChangeLogReads<S> {
  /** Rows id, session_id, kind, seq with id above `after`, id ascending, at most `limit`. */
  changesAfter: SqlStatement<S, { after: number; limit: number }>;
  /** One row: last (the highest id, 0 for none), trimmed (the highest id let go, 0 for none). */
  changesBounds: SqlStatement<S, Record<string, never>>;
}

interface ChangeRow {
  id: number | string;
  session_id: string;
  kind: ChangeKind;
  seq: number | string | null;
}

interface BoundsRow {
  last: number | string | null;
  trimmed: number | string | null;
}

/** The change log `reads` read through `run`; watchers read it every `pollMs` (default core's). */
export function idChangeLog<S>(
  run: RunStatement<S>,
  reads: IdChangeLogReads<S>,
  pollMs?: number,
): ChangeLog {
  const bounds = async () => {
    const { rows } = await run<BoundsRow>(reads.changesBounds.sql, reads.changesBounds.args({}));
    return { last: Number(rows[0]?.last ?? 0), trimmed: Number(rows[0]?.trimmed ?? 0) };
  };
  return {
    ...(pollMs === undefined ? {} : { changesPollMs: pollMs }),
    async changes({ after, limit }): Promise<ChangesPage | 'expired'> {
      if (after === null) return { changes: [], position: logPosition((await bounds()).last) };
      const from = Number(readLogPosition(after)[0]);
      const { rows } =
        limit === 0
          ? { rows: [] }
          : await run<ChangeRow>(
              reads.changesAfter.sql,
              reads.changesAfter.args({ after: from, limit }),
            );
      // Read after the rows: a trim that came before them would show here.
      const { last, trimmed } = await bounds();
      if (from > last) throw notThisLog(after);
      if (from < trimmed) return 'expired';
      const changes = rows.map((row) => ({
        position: logPosition(row.id),
        sessionId: row.session_id,
        kind: row.kind,
        seq: row.seq === null ? null : Number(row.seq),
      }));
      return { changes, position: changes.at(-1)?.position ?? after };
    },
  };
}
