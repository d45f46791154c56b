/**
 * A server that drops the store's connections under load (sessions terminated from the
 * server's side, as a failover or an idle-session killer does, and a fast restart), on a
 * PostgreSQL of the test's own: the shared one is never restarted.
 */
import { CheckpointStore } from '@ckpt/core';
import { errorCode } from '@ckpt/core/adapter';
import { type PostgresOptions, postgres } from '@ckpt/postgres';
import {
  expectDroppedConnectionsSurvived,
  type ScratchPostgres,
  scratchPostgresAvailable,
  startScratchPostgres,
  summary,
  writeWhileDropping,
} from '@ckpt/test-servers';
import pg from 'pg';
import { afterAll, beforeAll, describe, it } from 'vitest';

const available = await scratchPostgresAvailable();

// The store's sessions, by the application_name its connections give.
const APPLICATION = 'ckpt-dropped-connections';

// While the server restarts or recovers, a new connection is refused, or the server says it
// is not ready.
const NOT_CONNECTED = new Set(['ECONNREFUSED', '57P03']);

describe.skipIf(!available)('postgres when the server drops connections', () => {
  let server: ScratchPostgres;
  beforeAll(async () => {
    server = await startScratchPostgres();
  });
  afterAll(async () => {
    await server?.remove();
  });

  /**
   * `work` on a connection of its own: one kept from an earlier fault could be the next to go,
   * as one the server was about to end when the writers got their calls through.
   */
  const onServer = async <T>(work: (client: pg.Client) => Promise<T>): Promise<T> => {
    const client = new pg.Client({ connectionString: server.url });
    client.on('error', () => {}); // reported to the query too
    await client.connect();
    try {
      return await work(client);
    } finally {
      await client.end();
    }
  };
  /** Every session of the store ended by an administrator: 57P01 on each. */
  const terminate = () =>
    onServer((client) =>
      client.query(
        'SELECT pg_terminate_backend(pid) FROM pg_stat_activity WHERE application_name = $1',
        [APPLICATION],
      ),
    );
  /**
   * One session's process killed: its socket closes with no word, and the server ends every
   * other session (57P02) and recovers. Done once this fault's own connection has been ended
   * too, so that the calls the writers get through before the next are made after it.
   */
  const crash = () =>
    onServer(async (client) => {
      const { rows } = await client.query<{ pid: number }>(
        'SELECT pid FROM pg_stat_activity WHERE application_name = $1 LIMIT 1',
        [APPLICATION],
      );
      // (events.once would reject at the 'error' pg reports first.)
      const ended = new Promise((resolve) => client.once('end', resolve));
      process.kill(rows[0]!.pid, 'SIGKILL');
      await ended;
    });
  const restart = () => server.restart();
  const notConnected = (cause: unknown) => NOT_CONNECTED.has(errorCode(cause));

  const survives = async (options: PostgresOptions, faults: (() => Promise<unknown>)[]) => {
    const store = new CheckpointStore(postgres(options));
    try {
      const report = await writeWhileDropping({ store, writers: 16, faults, callsBetween: 4 });
      console.info('postgres dropped connections:', JSON.stringify(summary(report)));
      expectDroppedConnectionsSurvived(report, {
        notConnected,
        brokenConnectionUsed: 'not queryable',
      });
    } finally {
      await store.close();
    }
  };

  it('lives through sessions terminated, a restart and a crash under 16 writers on a pool of 10 with group commit', async () => {
    await survives(
      { url: `${server.url}?application_name=${APPLICATION}`, namespace: 'from_url' },
      [...Array(12).fill(terminate), restart, crash, ...Array(12).fill(terminate)],
    );
  });

  it("lives through sessions terminated on the caller's pool", async () => {
    const pool = new pg.Pool({
      connectionString: server.url,
      application_name: APPLICATION,
      max: 10,
    });
    // pg's rule for every pool: a connection that breaks while idle is reported here.
    pool.on('error', () => {});
    try {
      await survives({ pool, namespace: 'given_pool' }, Array(24).fill(terminate));
    } finally {
      await pool.end();
    }
  });
});
