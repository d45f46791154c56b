/** The client a store runs on: one it opens from a URL (and closes), or the caller's own. */
import { once } from 'node:events';
import {
  CONNECT_TIMEOUT_MS,
  invalidArgument,
  type OpenedConnection,
  openConnection,
} from '@ckpt/core/adapter';
import { type Cluster, Redis } from 'ioredis';
import { connectAttempts, type RedisClient, setupRefusals } from './runner.js';

/** Options of `redis()` and `redisKv()`: a connection string or an existing ioredis client. */
export type RedisOptions = ({ url: string } | { client: RedisClient }) & {
  /** The prefix of every key; default `ckpt`. */
  namespace?: string;
  /**
   * Mark the namespace as a store where it is not one yet (default true). False opens only a
   * namespace that holds a store, and writes nothing to open it: one with no key is NOT_FOUND.
   */
  create?: boolean;
};

/**
 * How the clients the store opens behave when a connection breaks. A command in flight may
 * have run, so sending it again could write twice: it fails instead, at once (ioredis 5 would
 * otherwise leave it pending forever when it does not resend), and the caller retries with
 * its idempotency key. A command issued while the connection is down fails at the next
 * failed attempt instead of waiting for many.
 */
export const CLIENT_OPTIONS = {
  autoResendUnfulfilledCommands: false,
  maxRetriesPerRequest: 0,
} as const;

/** A client, whether it is ours to close, and the namespace. */
export interface Connection {
  client: RedisClient;
  owned: boolean;
  namespace: string;
  /** Set with `create: false`: where the namespace must be found (see `openConnection`). */
  existing: OpenedConnection<RedisClient>['existing'];
}

/** Open (or adopt) the client named by `options`. */
export function connect(options: RedisOptions): Connection {
  const { handle, owned, namespace, existing } = openConnection<RedisClient>(options, {
    factory: 'redis',
    handle: 'client',
    handleKind: 'an ioredis Redis or Cluster',
    methods: ['call', 'callBuffer'],
    example: 'redis://127.0.0.1:6379',
    open(url) {
      const { rest, connectTimeout } = takeConnectTimeout(url);
      const client = new Redis(rest, { ...CLIENT_OPTIONS, connectTimeout });
      // Errors reach the calls that hit them; without a listener ioredis would log each one.
      client.on('error', (err) => refuseFailedSelect(client, err));
      watchConnecting(client);
      return client;
    },
  });
  refuseReplicaReads(handle);
  return { client: handle, owned, namespace, existing };
}

/**
 * The URL without its `connectTimeout` parameter (milliseconds), and that parameter as a
 * number (`CONNECT_TIMEOUT_MS` when it names none): ioredis would pass the text on to Node,
 * which throws it out of a timer, where no call can catch it.
 */
function takeConnectTimeout(url: string): { rest: string; connectTimeout: number } {
  let parsed: URL;
  try {
    parsed = new URL(url);
  } catch {
    return { rest: url, connectTimeout: CONNECT_TIMEOUT_MS }; // ioredis says what is wrong
  }
  const given = parsed.searchParams.get('connectTimeout');
  if (given === null) return { rest: url, connectTimeout: CONNECT_TIMEOUT_MS };
  if (!/^[1-9]\d*$/.test(given)) {
    throw new Error(`connectTimeout must be a whole number of milliseconds; got '${given}'`);
  }
  parsed.searchParams.delete('connectTimeout');
  return { rest: parsed.toString(), connectTimeout: Number(given) };
}

/**
 * Keep what `client` meets while it connects, so that a call that fails because no connection
 * could be made says why (runner.ts): a refused connection or login, a server that accepted
 * the connection and hung up before answering, as a server of another kind does, or one that
 * never answered. ioredis bounds only the wait for the connection itself; a server that
 * accepts and stays silent would hold every call forever, so the wait for its first answer
 * gets the same bound, after which the connection is dropped and the calls fail.
 */
function watchConnecting(client: Redis): void {
  const attempts = {
    ready: 0,
    lastError: undefined as Error | undefined,
    hungUp: false,
    silent: false,
  };
  let connected = false;
  let answerDue: NodeJS.Timeout | undefined;
  connectAttempts.set(client, attempts);
  client.on('connect', () => {
    connected = true;
    answerDue = setTimeout(() => {
      attempts.silent = true;
      client.stream.destroy();
    }, client.options.connectTimeout);
    answerDue.unref();
  });
  client.on('ready', () => {
    clearTimeout(answerDue);
    attempts.ready++;
    attempts.lastError = undefined;
    attempts.hungUp = false;
    attempts.silent = false;
    connected = false;
  });
  client.on('error', (err: Error) => {
    attempts.lastError = err;
  });
  client.on('close', () => {
    clearTimeout(answerDue);
    if (connected) attempts.hungUp = true;
    connected = false;
  });
}

/**
 * A URL's database (`redis://host:6379/3`) that the server does not have: ioredis reports the
 * failed SELECT as an error event and goes on in database 0, where the store would read and
 * write beside whatever else is there. The client is closed instead, before its first command,
 * and every call fails saying why.
 */
function refuseFailedSelect(client: Redis, err: Error & { command?: { name?: string } }): void {
  if (err.command?.name !== 'select') return;
  setupRefusals.set(
    client,
    new Error(
      `Redis refused database ${client.options.db} named in the URL (${err.message}); name one the server has, from 0 to its 'databases' setting less 1 (16 databases by default)`,
      { cause: err },
    ),
  );
  client.disconnect();
}

/**
 * A Cluster client may send read commands to replicas (`scaleReads`), which lag behind the
 * primaries the scripts write on: a load right after a checkpoint could miss it, and every
 * compare-and-set loop (`update()`, `state().update()`) could keep losing to a stale read.
 */
function refuseReplicaReads(client: RedisClient): void {
  if (!(client as Cluster).isCluster) return;
  const { scaleReads } = (client as Cluster).options;
  if (scaleReads === undefined || scaleReads === 'master') return;
  const setting = typeof scaleReads === 'function' ? 'a function' : `'${scaleReads}'`;
  throw invalidArgument(
    'client',
    `this Cluster client reads from replicas (scaleReads: ${setting}), which can return what was just overwritten; give the store a Cluster client with scaleReads: 'master' (the default).`,
  );
}

/** Close a client the store opened; leave the caller's alone. */
export async function disconnect(connection: Connection): Promise<void> {
  const { client } = connection;
  if (!connection.owned || client.status === 'end') return;
  if (client.status !== 'ready') {
    client.disconnect(); // stops connecting; there is nothing to flush
    return;
  }
  // QUIT lets the replies in flight arrive; the socket closes just after its own reply.
  const ended = once(client, 'end');
  await client.quit().catch(() => client.disconnect());
  await ended;
}
