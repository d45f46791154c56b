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
      if (!String((err as Error)?.message).startsWith('NOSCRIPT')) throw err;
      return (await client.eval(this.source, keys.length, ...keys, ...args)) as T;
    }
  }
}
