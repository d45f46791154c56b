/**
 * What wakes a namespace's watchers after writes: NOTIFY on a connection of its own, never one
 * the writes wait for (a pool's connection taken by a notification would send the next write
 * the slow way, as if the pool were busy), and never inside a write (NOTIFY holds a lock of
 * the whole server until its commit is done). One notifier serves every backend of the process
 * on the same server and namespace: a process that opens a backend a request (or a test suite,
 * hundreds) would otherwise connect anew for each. Its connection is made at the first write
 * and let go a second after the last, so it holds nothing while nothing is written and never
 * keeps the process running; the notifier goes with it.
 */
import pg from 'pg';

/** The statement that wakes watchers. */
const NOTIFY_STATEMENT = 'SELECT pg_notify($1, $2)';

/** The notifiers in use, by server and channel. */
const notifiers = new Map<string, () => void>();

/** What names the server and the user of `options`, as a key (the application name aside). */
function serverKey(options: pg.PoolConfig): unknown[] {
  const { host, port, database, user, password, connectionString, ssl } = options;
  return [
    host,
    port,
    database,
    user,
    typeof password === 'string' ? password : typeof password,
    connectionString,
    ssl,
  ];
}

/**
 * What to call after each write has committed, to wake the watchers of `channel` on the server
 * of `options`. One notification is in flight at a time (of all the process's backends on
 * them), and one more after it covers the writes it did not; a lost one costs a watcher its
 * poll's wait, nothing more.
 */
export function notifierFor(options: pg.PoolConfig, channel: string, name: string): () => void {
  const key = JSON.stringify([serverKey(options), channel]);
  return () => (notifiers.get(key) ?? newNotifier(key, options, channel, name))();
}

function newNotifier(key: string, options: pg.PoolConfig, channel: string, name: string) {
  const connection = new pg.Pool({
    ...options,
    max: 1,
    idleTimeoutMillis: 1_000,
    allowExitOnIdle: true,
    application_name: name,
  });
  connection.on('error', () => {});
  let inFlight = false;
  let again = false;
  const notify = (): void => {
    if (inFlight) {
      again = true;
      return;
    }
    inFlight = true;
    connection
      .query(NOTIFY_STATEMENT, [channel, ''])
      .catch(() => {})
      .finally(() => {
        inFlight = false;
        if (again) {
          again = false;
          notify();
        }
      });
  };
  // Its connection let go while idle: the notifier goes with it, and the next write makes another.
  connection.on('remove', () => {
    if (connection.totalCount > 0 || inFlight) return;
    notifiers.delete(key);
    void connection.end().catch(() => {});
  });
  notifiers.set(key, notify);
  return notify;
}
