/** The client a store runs on: one it opens from a URL (and closes), or the caller's own. */
import { once } from 'node:events';
import { checkNamespace, invalidArgument } from '@ckpt/core';
import { Redis } from 'ioredis';
import type { RedisClient } from './script.js';

/** Options of `redis()` and `redisKv()`: a connection string or an existing ioredis client. */
export type RedisOptions = ({ url: string } | { client: RedisClient }) & {
  /** The prefix of every key; default `ckpt`. */
  namespace?: string;
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
}

/** Open (or adopt) the client named by `options`. */
export function connect(options: RedisOptions): Connection {
  if (typeof options !== 'object' || options === null) {
    throw invalidArgument('options', 'redis() needs { url } or { client }.');
  }
  const namespace = checkNamespace(options.namespace);
  if ('client' in options && options.client) {
    return { client: options.client, owned: false, namespace };
  }
  if (!('url' in options) || typeof options.url !== 'string' || options.url === '') {
    throw invalidArgument(
      'url',
      "redis() needs { url: 'redis://127.0.0.1:6379' } or { client } (an ioredis Redis or Cluster).",
    );
  }
  const client = new Redis(options.url, CLIENT_OPTIONS);
  // Errors reach the calls that hit them; without a listener ioredis would log each one.
  client.on('error', () => {});
  return { client, owned: true, namespace };
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
