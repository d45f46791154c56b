/**
 * A Lua script run by its SHA1 (EVALSHA). A server that does not have it (it restarted, or
 * a cluster node took over after a failover) answers NOSCRIPT, and the script is sent whole
 * once (EVAL, which also caches it). The client is left as it was given: no commands are
 * defined on it.
 */
import { createHash } from 'node:crypto';
import type { Cluster, Redis } from 'ioredis';

export type RedisClient = Redis | Cluster;

type Arg = string | number | Buffer;

export class Script {
  readonly sha: string;

  constructor(readonly source: string) {
    this.sha = createHash('sha1').update(source).digest('hex');
  }

  /** Run with `keys` (all in one slot: the first one routes the call on a cluster) and `args`. */
  async run<T>(client: RedisClient, keys: readonly string[], args: readonly Arg[]): Promise<T> {
    try {
      return (await client.evalsha(this.sha, keys.length, ...keys, ...args)) as T;
    } catch (err) {
      if (!String((err as Error)?.message).startsWith('NOSCRIPT')) throw explain(err, client);
      return explained(
        client,
        client.eval(this.source, keys.length, ...keys, ...args) as Promise<T>,
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

/** Await a command's reply; a broken or missing connection becomes an error that says what to do. */
export async function explained<T>(client: RedisClient, reply: Promise<T>): Promise<T> {
  try {
    return await reply;
  } catch (err) {
    throw explain(err, client);
  }
}

/** Why a client the store opened was closed before its first command (see connection.ts). */
export const setupRefusals = new WeakMap<RedisClient, Error>();

// ioredis reports a connection it could not open or keep as "Reached the max retries per
// request limit" or "Connection is closed", which names neither the server nor a remedy.
function explain(err: unknown, client: RedisClient): unknown {
  const message = String((err as Error)?.message);
  if (
    (err as Error)?.name !== 'MaxRetriesPerRequestError' &&
    !message.includes('Connection is closed')
  ) {
    return err;
  }
  const refusal = setupRefusals.get(client);
  if (refusal) return refusal;
  const { host, port } = client.options as { host?: string; port?: number };
  const where = host ? ` at ${host}:${port}` : '';
  return new Error(
    `lost or could not open the connection to Redis${where}, so the call may or may not have run; check that the server is up, then retry (a checkpoint with the same idempotencyKey)`,
    { cause: err },
  );
}
