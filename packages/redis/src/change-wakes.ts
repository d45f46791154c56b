/**
 * What wakes a store's watchers at once: every script that logs a change publishes on its
 * shard's channel (SPUBLISH on the stream's name, in the script's slot: see LOG_CHANGE in
 * statements.ts). A store that has watchers subscribes to the 16 channels on connections of its
 * own, never on the client its calls run on (a subscribed connection can run nothing else):
 * one on a single server, one per master that holds shards on a cluster, however many watchers
 * the store has (core's one tail per store listens once).
 *
 * When a connection is cut (a restart, CLIENT KILL, a failover), or a shard's slot moves to
 * another master, every connection is let go and the subscriptions are made again from the
 * cluster's slots as they are then, and the watchers are woken once more: what was logged
 * meanwhile is in the streams. Until then, and against a lost message, watchers read at their
 * guard poll.
 */
import { once } from 'node:events';
import { Cluster, type Redis, type RedisOptions } from 'ioredis';
import type { RedisClient } from './runner.js';
import { changesKeys, SHARD_SLOTS, SHARDS } from './schema.js';

/** At most this long between two attempts to subscribe again. */
const MOST_BETWEEN_TRIES_MS = 2_000;

/** The name of namespace `ns`'s subscribed connections, as CLIENT LIST shows them. */
export function subscriberName(ns: string): string {
  return `ckpt-watch-${ns}`;
}

/** A connection to open, and the channels to subscribe to on it. */
interface Subscription {
  connection: Redis;
  channels: string[];
}

/**
 * How a subscribed connection behaves: it connects when asked, and is not made again by ioredis
 * once cut (all are made again here, from the slots as they are then), nor subscribed again.
 */
function subscriberOptions(ns: string, keyPrefix: string): Partial<RedisOptions> {
  return {
    connectionName: subscriberName(ns),
    keyPrefix,
    lazyConnect: true,
    retryStrategy: () => null,
    autoResubscribe: false,
    maxRetriesPerRequest: 0,
  };
}

/** Which connections to open, and which channels on each (names as the scripts see keys). */
async function subscriptions(client: RedisClient, ns: string): Promise<Subscription[]> {
  const channels = Array.from({ length: SHARDS }, (_, shard) => changesKeys(ns, shard).stream);
  if (!(client instanceof Cluster)) {
    const options = subscriberOptions(ns, client.options.keyPrefix ?? '');
    return [{ connection: client.duplicate(options), channels }];
  }
  // A command waits for the client to know the cluster (a new one knows no node yet); then the
  // slots as the cluster serves them now: after a failover, ioredis's may be stale.
  await client.ping();
  await new Promise<void>((resolve, reject) =>
    client.refreshSlotsCache((err) => (err ? reject(err) : resolve())),
  );
  // The cluster's prefix, which its node connections do not add themselves (see destroy.ts).
  const keyPrefix = client.options.keyPrefix ?? client.options.redisOptions?.keyPrefix ?? '';
  const byMaster = new Map<string, string[]>();
  for (const [shard, slot] of SHARD_SLOTS.entries()) {
    const master = client.slots[slot]?.[0];
    if (master === undefined) throw new Error(`no master serves slot ${slot} of the cluster`);
    byMaster.set(master, [...(byMaster.get(master) ?? []), channels[shard]!]);
  }
  const masters = client.nodes('master');
  return [...byMaster].map(([key, on]) => {
    const node = masters.find((n) => `${n.options.host}:${n.options.port}` === key);
    if (node === undefined) throw new Error(`the cluster client has no connection to ${key}`);
    return { connection: node.duplicate(subscriberOptions(ns, keyPrefix)), channels: on };
  });
}

/** Close `connections` and resolve once each has ended. */
async function closeAll(connections: readonly Redis[]): Promise<void> {
  await Promise.all(
    connections.map(async (connection) => {
      if (connection.status === 'end') return;
      // Never connected: nothing to wait for.
      if (connection.status === 'wait') return connection.disconnect();
      const ended = once(connection, 'end');
      connection.disconnect();
      await ended;
    }),
  );
}

/**
 * Subscribe to namespace `ns`'s change channels; `wake` is called at each message and once
 * after the subscriptions were made again. Resolves once subscribed (or once a first attempt
 * failed, trying again meanwhile) to what stops it.
 */
export async function listenForChanges(
  client: RedisClient,
  ns: string,
  wake: () => void,
): Promise<() => Promise<void>> {
  let stopped = false;
  let open: Redis[] = [];
  let retry: ReturnType<typeof setTimeout> | undefined;
  // Each attempt's connections answer to their attempt only: closing the ones of an attempt
  // that was given up must not start another.
  let attempt = 0;

  const subscribe = async (): Promise<void> => {
    const mine = ++attempt;
    const made = await subscriptions(client, ns);
    if (stopped || mine !== attempt) {
      // Stopped, or given up for a newer attempt, while it looked for the masters.
      await closeAll(made.map((s) => s.connection));
      return;
    }
    open = made.map((s) => s.connection);
    for (const { connection } of made) {
      connection.on('error', () => {});
      connection.on('smessage', () => wake());
      // Cut, or (ioredis 6) a shard channel whose slot moved to another master.
      const lost = () => {
        if (!stopped && mine === attempt) again(100);
      };
      connection.on('end', lost);
      connection.on('moved', lost);
    }
    await Promise.all(
      made.map(async ({ connection, channels }) => {
        await connection.connect();
        // One command a channel: on a cluster, SSUBSCRIBE takes channels of one slot only.
        await Promise.all(channels.map((channel) => connection.ssubscribe(channel)));
      }),
    );
  };

  const again = (delay: number) => {
    attempt++;
    void closeAll(open);
    open = [];
    clearTimeout(retry);
    retry = setTimeout(() => {
      if (stopped) return;
      subscribe().then(wake, () => {
        if (!stopped) again(Math.min(delay * 2, MOST_BETWEEN_TRIES_MS));
      });
    }, delay);
  };

  await subscribe().catch(() => again(100));
  return async () => {
    stopped = true;
    attempt++;
    clearTimeout(retry);
    const last = open;
    open = [];
    await closeAll(last);
  };
}
