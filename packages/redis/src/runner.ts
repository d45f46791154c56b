/**
 * A Lua script run by its SHA1 (EVALSHA). A server that does not have it (it restarted, or
 * a cluster node took over after a failover) answers NOSCRIPT, and the script is sent whole
 * once (EVAL, which also caches it). The client is left as it was given: no commands are
 * defined on it.
 */
import { createHash } from 'node:crypto';
import { errorCode, otherServerHint, SERVER_HINTS } from '@ckpt/core/adapter';
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

/** A namespace and the client its commands run on: what the reads, writes and state work in. */
export interface RedisNamespace {
  readonly client: RedisClient;
  readonly namespace: string;
}

type Arg = string | number | Buffer;

/** Whether a call only reads, or may write. */
export type Access = 'read' | 'write';

export class Script {
  readonly sha: string;

  constructor(
    readonly access: Access,
    readonly source: string,
  ) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Run with `keys` (all in one slot: the first one routes the call on a cluster) and `args`. */
  run<T>(client: RedisClient, keys: readonly string[], args: readonly Arg[]): Promise<T> {
    return this.#send(client, (command, ...rest) => client.call(command, ...rest), keys, args);
  }

  /**
   * Run as `run` does, with every string of the reply as the bytes it is (a Buffer): ioredis
   * otherwise decodes each as UTF-8, which mangles stored values that are not text.
   */
  runForBytes<T>(client: RedisClient, keys: readonly string[], args: readonly Arg[]): Promise<T> {
    return this.#send(
      client,
      (command, ...rest) => client.callBuffer(command, ...rest),
      keys,
      args,
    );
  }

  async #send<T>(
    client: RedisClient,
    call: (command: string, ...args: Arg[]) => Promise<unknown>,
    keys: readonly string[],
    args: readonly Arg[],
  ): Promise<T> {
    const issued = issuedOn(client);
    try {
      return (await call('evalsha', this.sha, keys.length, ...keys, ...args)) as T;
    } catch (err) {
      if (!String((err as Error)?.message).startsWith('NOSCRIPT')) {
        throw explain(err, client, this.access, issued);
      }
      return explained(
        client,
        call('eval', this.source, keys.length, ...keys, ...args) as Promise<T>,
        this.access,
      );
    }
  }

  /**
   * Run a script whose reply is an integer. It arrives as a number, or as a string from a
   * client made with `stringNumbers`; either way it is returned as a number.
   */
  async count(client: RedisClient, keys: readonly string[], args: readonly Arg[]): Promise<number> {
    return Number(await this.run<number | string>(client, keys, args));
  }
}

/**
 * Await a command's reply (of a read, unless `access` says otherwise); a broken or missing
 * connection becomes an error that says what to do. Call it as the command is issued.
 */
export async function explained<T>(
  client: RedisClient,
  reply: Promise<T>,
  access: Access = 'read',
): Promise<T> {
  const issued = issuedOn(client);
  try {
    return await reply;
  } catch (err) {
    throw explain(err, client, access, issued);
  }
}

/** Why a client the store opened was closed before its first command (see connection.ts). */
export const setupRefusals = new WeakMap<RedisClient, Error>();

/**
 * What a client the store opened met while connecting (kept by connection.ts): how often it
 * became ready, the last error it reported since it was last ready (a refused connection or
 * login), whether a server accepted a connection and hung up before answering, as a
 * server of another kind does, and whether one accepted it and never answered, as another
 * that waits for its own client to speak first does. A client the caller gave is not watched.
 */
export interface ConnectAttempts {
  ready: number;
  lastError: Error | undefined;
  hungUp: boolean;
  silent: boolean;
}

/** The attempts of each client the store opened. */
export const connectAttempts = new WeakMap<RedisClient, ConnectAttempts>();

/** The client's state as a command was issued: whether it could be sent at once. */
interface Issued {
  ready: boolean;
  readyCount: number | undefined;
}

function issuedOn(client: RedisClient): Issued {
  return { ready: client.status === 'ready', readyCount: connectAttempts.get(client)?.ready };
}

// ioredis's parser met a reply that is no RESP at all: another kind of server answered.
const NOT_RESP = /^(Unknown RESP type|Protocol error)/;

// The errors of a connection that could not be made, which Node and the store's hints name.
const CONNECT_CODES = new Set([
  'ECONNREFUSED',
  'ENOTFOUND',
  'EAI_AGAIN',
  'ETIMEDOUT',
  'EHOSTUNREACH',
]);

/**
 * ioredis fails a command whose connection could not be opened, or broke under it, with
 * "Reached the max retries per request limit" or "Connection is closed": neither names the
 * server or a remedy, nor whether the command was sent. Only a command sent can have run,
 * and only a write matters then.
 */
function explain(err: unknown, client: RedisClient, access: Access, issued: Issued): unknown {
  const message = String((err as Error)?.message);
  const { host, port } = client.options as { host?: string; port?: number };
  const where = host ? `${host}:${port}` : 'the server';
  // A Cluster's options name no one node.
  const redisAt = host ? `Redis at ${where}` : 'Redis';
  if (NOT_RESP.test(message)) {
    return new Error(otherServerHint('Redis', where, 'garbled'), { cause: err });
  }
  if (
    (err as Error)?.name !== 'MaxRetriesPerRequestError' &&
    !message.includes('Connection is closed')
  ) {
    return err;
  }
  const refusal = setupRefusals.get(client);
  if (refusal) return refusal;
  const attempts = connectAttempts.get(client);
  // Sent: the connection was up when it was issued, or came up after. Unknown for a client
  // the caller gave, which is not watched.
  const sent =
    issued.ready || (attempts === undefined ? null : attempts.ready !== issued.readyCount);
  if (sent === false) {
    const reason = attempts?.lastError;
    // The server's greeting was no RESP, and the client hung up on it.
    if (NOT_RESP.test(String(reason?.message))) {
      return new Error(otherServerHint('Redis', where, 'garbled'), { cause: reason });
    }
    // Its code (ECONNREFUSED, …) or the server's refusal (WRONGPASS, …) the store's hints name.
    if (reason && (CONNECT_CODES.has(errorCode(reason)) || reason.name === 'ReplyError')) {
      return reason;
    }
    if (attempts?.silent) {
      return new Error(otherServerHint('Redis', where, 'silent'), { cause: err });
    }
    if (attempts?.hungUp)
      return new Error(otherServerHint('Redis', where, 'closed'), { cause: err });
    return new Error(
      `could not open a connection to ${redisAt}, so the call did not run; check that the server is up and that the URL names its host and port`,
      { cause: err },
    );
  }
  const lost = sent ? 'lost the connection' : 'lost or could not open the connection';
  if (access === 'read') {
    return new Error(`${lost} to ${redisAt} during a read; retry it`, { cause: err });
  }
  return new Error(`${lost} to ${redisAt} during a write, so ${SERVER_HINTS.connectionLost}`, {
    cause: err,
  });
}
