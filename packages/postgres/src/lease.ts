/**
 * Connections leased from a pool for more than one statement. pg reports a connection that
 * breaks (the server terminated it, or the socket closed) to the client's 'error' listeners;
 * with none, the event is thrown out of the socket's handler and the process exits. The pool
 * listens while a connection is idle and stops as it hands it out, which can happen while pg
 * is still reading a chunk from the server: the ReadyForQuery that frees a connection, then
 * the server's FATAL in the same chunk. `await pool.connect()` would resume only after the
 * whole chunk is read, so a listener attached then comes too late; the pool's callback runs at
 * once, and the listener goes on there. A connection that broke before its lessee got it goes
 * back with its error, which drops it from the pool, and another is leased: handed out again,
 * it would fail every statement with "Client has encountered a connection error and is not
 * queryable".
 */
import type pg from 'pg';

/** A connection of the pool, listened to for errors until it is released. */
export interface Leased {
  readonly client: pg.PoolClient;
  /** Give the connection back; one that broke, or given `err`, is closed and dropped. */
  release(err?: unknown): void;
}

// Leases in a row that may find their connection broken before giving up with its error: a
// connection the pool hands out breaks only in the instant the server drops it, so a second
// one is all but always whole; the bound keeps a server that drops every connection as it
// opens from holding a lease in a loop.
const ATTEMPTS = 3;

/** A connection of `pool` that had not broken when the pool handed it out. */
export async function lease(pool: pg.Pool): Promise<Leased> {
  for (let attempt = 1; ; attempt++) {
    const { leased, broken } = await take(pool);
    const err = broken();
    if (err === undefined) return leased;
    leased.release(err);
    if (attempt === ATTEMPTS) throw err;
  }
}

/** Run `work` on a leased connection, then release it (dropped when `work` failed). */
export async function onLeased<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  const { client, release } = await lease(pool);
  let failure: unknown;
  try {
    return await work(client);
  } catch (err) {
    failure = err;
    throw err;
  } finally {
    release(failure);
  }
}

/**
 * Run `work` in a transaction at READ COMMITTED (whatever the pool's default) on a leased
 * connection: committed when it ends, rolled back when it fails.
 */
export function readCommitted<T>(
  pool: pg.Pool,
  work: (client: pg.PoolClient) => Promise<T>,
): Promise<T> {
  return onLeased(pool, async (client) => {
    await client.query('BEGIN ISOLATION LEVEL READ COMMITTED');
    try {
      const result = await work(client);
      await client.query('COMMIT');
      return result;
    } catch (err) {
      await client.query('ROLLBACK').catch(() => {});
      throw err;
    }
  });
}

/** The next connection the pool hands out, with a listener from that moment. */
function take(pool: pg.Pool): Promise<{ leased: Leased; broken: () => Error | undefined }> {
  return new Promise((resolve, reject) => {
    pool.connect((err, client, done) => {
      if (err || !client) {
        reject(err);
        return;
      }
      let broke: Error | undefined;
      const listener = (error: Error) => {
        broke ??= error;
      };
      client.on('error', listener);
      resolve({
        leased: {
          client,
          release(failure) {
            client.off('error', listener);
            done((failure ?? broke) as Error | undefined);
          },
        },
        broken: () => broke,
      });
    });
  });
}
