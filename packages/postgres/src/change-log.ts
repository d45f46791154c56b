/**
 * PostgreSQL's change log (schema step 8), as watch() reads it. Its rows are ordered by the
 * transaction that wrote them and then by id, and read only below the oldest transaction still
 * running: no row can appear there later, so a reader going page by page misses none. A
 * position is that pair, `<xid>.<id>`. Watchers are woken by NOTIFY on a connection of their
 * own, which each backend sends after its writes commit (see notifier.ts). Without `listen`,
 * watchers read the log at their poll, and writes notify no one.
 */
import {
  type ChangeKind,
  type ChangeLog,
  type ChangesPage,
  logPosition,
  notThisLog,
  readLogPosition,
} from '@ckpt/core/adapter';
import pg from 'pg';
import { notifierFor } from './notifier.js';
import { schemaIdentifier } from './schema.js';

/** The name of the channel the notifications of namespace `ns` go on. */
function channelOf(ns: string): string {
  return `ckpt_changes_${ns}`;
}

/** The largest transaction id or row id a position of this log can hold (bigint's largest). */
const LARGEST = 2n ** 63n - 1n;

/** How a listening connection that was cut is made again: at most this long between tries. */
const MOST_BETWEEN_TRIES_MS = 2_000;
/** The application name of namespace `ns`'s listening connections, as pg_stat_activity shows them. */
export function listenerName(ns: string): string {
  return `ckpt watch: ${ns}`;
}

interface PageRow {
  horizon: string;
  trimmed: string | null;
  changes: string;
}

/** The change log of namespace `ns` on `pool`, read once `ready` (the migration) resolved. */
export function postgresChangeLog(
  pool: pg.Pool,
  ns: string,
  ready: Promise<unknown>,
  wakes: boolean,
): ChangeLog & { changed?(): void; close(): Promise<void> } {
  const schema = schemaIdentifier(ns);
  const channel = channelOf(ns);
  const read = `
    WITH horizon AS (SELECT pg_snapshot_xmin(pg_current_snapshot()) AS xmin),
    page AS (
      SELECT c.xid::text AS xid, c.id, c.session_id, c.kind, c.seq FROM ${schema}.changes c
       WHERE (c.xid, c.id) > ($1::text::xid8, $2::bigint) AND c.xid < (SELECT xmin FROM horizon)
       ORDER BY c.xid, c.id LIMIT $3)
    SELECT (SELECT xmin::text FROM horizon) AS horizon,
           (SELECT value FROM ${schema}.meta WHERE key = 'changes_trimmed_through') AS trimmed,
           (SELECT coalesce(json_agg(page ORDER BY page.xid::xid8, page.id), '[]') FROM page)::text AS changes`;
  const notify = notifierFor(pool.options, channel, `ckpt notify: ${ns}`);
  let closed = false;
  const log = {
    async changes({
      after,
      limit,
    }: {
      after: string | null;
      limit: number;
    }): Promise<ChangesPage | 'expired'> {
      const [xid, id] = after === null ? [0n, 0n] : readLogPosition(after, 2);
      // Past anything the server numbers: no cursor of this log (nor a value the casts take).
      if (xid! > LARGEST || id! > LARGEST) throw notThisLog(after!);
      await ready;
      const { rows } = await pool.query<PageRow>(read, [
        String(xid),
        String(id),
        after === null ? 0 : limit,
      ]);
      const { horizon, trimmed, changes: text } = rows[0]!;
      const start = logPosition(horizon, 0);
      if (after === null) return { changes: [], position: start };
      // Every position the log gives is at or below the horizon, which only grows.
      if (after > start) throw notThisLog(after);
      if (trimmed !== null && after < trimmed) return 'expired';
      const changes = (
        JSON.parse(text) as {
          xid: string;
          id: number;
          session_id: string;
          kind: ChangeKind;
          seq: number | null;
        }[]
      ).map((row) => ({
        position: logPosition(row.xid, row.id),
        sessionId: row.session_id,
        kind: row.kind,
        seq: row.seq === null ? null : Number(row.seq),
      }));
      // A page short of the limit holds every row below the horizon: the reader may go on from it.
      const last = changes.at(-1)?.position ?? after;
      const position = changes.length < limit && start > last ? start : last;
      return { changes, position };
    },

    onChanges: (wake: () => void) => listen(pool, channel, listenerName(ns), wake),

    changed() {
      if (!closed) notify();
    },

    async close() {
      // The notifier is the process's, shared: it lets go of its connection once idle.
      closed = true;
    },
  };
  if (wakes) return log;
  const { onChanges: _listen, changed: _notify, ...polled } = log;
  return polled;
}

/**
 * LISTEN on a connection of its own (not one of the pool's: a pool hands its connections to
 * other queries, and PgBouncer in transaction mode cannot hold a LISTEN), made again after it is
 * cut; `wake` is called at each notification and once after each reconnect.
 */
async function listen(pool: pg.Pool, channel: string, name: string, wake: () => void) {
  let stopped = false;
  let client: pg.Client | undefined;
  let retry: ReturnType<typeof setTimeout> | undefined;
  const open = async (): Promise<void> => {
    const next = new pg.Client({ ...pool.options, application_name: name });
    next.on('notification', () => wake());
    next.on('error', () => {});
    next.on('end', () => {
      if (!stopped && client === next) again(100);
    });
    client = next;
    try {
      await next.connect();
      await next.query(`LISTEN ${pg.escapeIdentifier(channel)}`);
    } catch (err) {
      client = undefined;
      await next.end().catch(() => {});
      throw err;
    }
  };
  // Tried again until it listens; meanwhile the watchers read at their poll, and once it
  // listens, at once: what committed while it was away is in the log.
  const again = (delay: number) => {
    client = undefined;
    retry = setTimeout(() => {
      if (stopped) return;
      open().then(wake, () => {
        if (!stopped) again(Math.min(delay * 2, MOST_BETWEEN_TRIES_MS));
      });
    }, delay);
  };
  await open().catch(() => again(100));
  return async () => {
    stopped = true;
    clearTimeout(retry);
    const last = client;
    client = undefined;
    await last?.end().catch(() => {});
  };
}
