/**
 * A change log in a table whose ids come in the order the changes commit (SQLite, which
 * commits one writer at a time): a watcher reads the rows above the id it has, and the meta row
 * that says up to which id the log let go tells it when what followed its position is gone.
 */
import type { ChangeKind, ChangeLog, ChangesPage } from '../adapter/backend.js';
import { logPosition, notThisLog, readLogPosition } from '../adapter/change-positions.js';
import type { RunStatement } from './run.js';
import type { SqlStatement } from './statement.js';

/** The read of an id-ordered change log. */
export interface IdChangeLogReads<S> {
  /**
   * The rows id, session_id, kind, seq with id above `after`, id ascending, at most `limit`,
   * each with the log's bounds, from one snapshot: last (the highest id, 0 for none) and
   * trimmed (the highest id let go, 0 for none); with no row above `after`, one row of the
   * bounds alone (id null).
   */
  changesPage: SqlStatement<S, { after: number; limit: number }>;
}

interface PageRow {
  id: number | string | null;
  session_id: string;
  kind: ChangeKind;
  seq: number | string | null;
  last: number | string | null;
  trimmed: number | string | null;
}

/** The change log `reads` read through `run`; watchers read it every `pollMs` (default core's). */
export function idChangeLog<S>(
  run: RunStatement<S>,
  reads: IdChangeLogReads<S>,
  pollMs?: number,
): ChangeLog {
  return {
    ...(pollMs === undefined ? {} : { changesPollMs: pollMs }),
    async changes({ after, limit }): Promise<ChangesPage | 'expired'> {
      const from = after === null ? 0 : Number(readLogPosition(after)[0]);
      const { rows } = await run<PageRow>(
        reads.changesPage.sql,
        reads.changesPage.args({ after: from, limit: after === null ? 0 : limit }),
      );
      const last = Number(rows[0]?.last ?? 0);
      if (after === null) return { changes: [], position: logPosition(last) };
      if (from > last) throw notThisLog(after);
      // The bounds come from the rows' snapshot: a trim that took rows of the page shows here.
      if (from < Number(rows[0]?.trimmed ?? 0)) return 'expired';
      const changes = rows
        .filter((row) => row.id !== null)
        .map((row) => ({
          position: logPosition(row.id!),
          sessionId: row.session_id,
          kind: row.kind,
          seq: row.seq === null ? null : Number(row.seq),
        }));
      return { changes, position: changes.at(-1)?.position ?? after };
    },
  };
}
