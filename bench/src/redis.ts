/** Redis: ckpt against raw SET / GET on the same client, one caller and 64 at once, and scaling. */
import { CheckpointStore } from '@ckpt/core';
import { redis } from '@ckpt/redis';
import { Redis } from 'ioredis';
import { interleaved, type Plan } from './measure.js';
import { agentState } from './payloads.js';
import type { Row } from './report.js';
import { populate, type Sizes, scaling, versusRaw } from './scenarios.js';

const stamp = Date.now().toString(36);

/** Every Redis measurement, in fresh namespaces on the server at `url` (removed afterwards). */
export async function benchRedis(url: string, plan: Plan, large: Sizes): Promise<Row[]> {
  const namespaces: string[] = [];
  const fresh = (name: string) => {
    const namespace = `bench_${stamp}_${name}`;
    namespaces.push(namespace);
    return namespace;
  };
  // One client: ckpt and the raw driver take turns on the very same connection.
  const client = new Redis(url, { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 });
  const rows: Row[] = [];
  try {
    const ns = fresh('raw');
    const store = new CheckpointStore(redis({ client, namespace: ns }));
    let next = 0;
    let kept = 0;
    const raw = {
      insert: async (encoded: string) => {
        const key = `${ns}:raw:${next++}`;
        await client.set(key, encoded);
        return key;
      },
      select: async (key: unknown) => (await client.get(key as string))!,
      discard: async () => {
        while (kept < next) {
          const batch = Math.min(1000, next - kept);
          await client.unlink(...Array.from({ length: batch }, (_, i) => `${ns}:raw:${kept + i}`));
          kept += batch;
        }
      },
      names: { insert: 'raw SET', select: 'raw GET' },
    };
    const targets = { checkpoint: '<= 1.5x', load: '<= 1.2x' };
    rows.push(...(await versusRaw('redis', store, raw, plan, targets)));
    rows.push(...(await versusRaw('redis', store, raw, plan, targets, 64)));
    rows.push(...(await scriptFloor(client, ns, plan)));

    const small: Sizes = { sessions: 100, checkpoints: 10 };
    const stores = {
      small: new CheckpointStore(redis({ client, namespace: fresh('small') })),
      large: new CheckpointStore(redis({ client, namespace: fresh('large') })),
    };
    await populate(stores.small, small, 32);
    await populate(stores.large, large, 32);
    rows.push(...(await scaling('redis', stores, { small, large }, plan)));
  } finally {
    for (const namespace of namespaces) await dropNamespace(client, namespace);
    await client.quit();
  }
  return rows;
}

/**
 * The floor that one script per operation sets: a Lua script that does nothing but the raw
 * SET or GET, against the command itself. Redis copies arguments into Lua and results out
 * of it, so the floor grows with the payload.
 */
async function scriptFloor(client: Redis, ns: string, plan: Plan): Promise<Row[]> {
  const set = await client.script('LOAD', "return redis.call('SET', KEYS[1], ARGV[1])");
  const get = await client.script('LOAD', "return redis.call('GET', KEYS[1])");
  const rows: Row[] = [];
  for (const size of [1024, 64 * 1024]) {
    const encoded = JSON.stringify(agentState(size));
    const key = `${ns}:floor:${size}`;
    const m = await interleaved(
      [
        { name: 'SET', op: () => client.set(key, encoded) },
        { name: 'EVALSHA SET', op: () => client.evalsha(set as string, 1, key, encoded) },
        { name: 'GET', op: () => client.get(key) },
        { name: 'EVALSHA GET', op: () => client.evalsha(get as string, 1, key) },
      ],
      plan,
    );
    const label = `${size / 1024} KiB`;
    for (const [operation, base, script] of [
      [`script floor: write ${label}`, 'SET', 'EVALSHA SET'],
      [`script floor: read ${label}`, 'GET', 'EVALSHA GET'],
    ] as const) {
      const stats = m.get(script)!;
      const baseStats = m.get(base)!;
      rows.push(
        {
          group: 'vs raw driver',
          operation,
          backend: 'redis',
          variant: `a script that only ${base}s`,
          stats,
          ratio: stats.p50Us / baseStats.p50Us,
          ratioTo: `raw ${base}`,
          target: null,
        },
        {
          group: 'vs raw driver',
          operation,
          backend: 'redis',
          variant: `raw ${base}`,
          stats: baseStats,
          ratio: null,
          ratioTo: null,
          target: null,
        },
      );
    }
  }
  return rows;
}

async function dropNamespace(client: Redis, namespace: string): Promise<void> {
  let cursor = '0';
  do {
    const [next, keys] = await client.scan(cursor, 'MATCH', `${namespace}:*`, 'COUNT', 1000);
    if (keys.length > 0) await client.unlink(...keys);
    cursor = next;
  } while (cursor !== '0');
}

/** The durability settings the Redis numbers were measured with. */
export async function redisSettings(url: string): Promise<Record<string, unknown>> {
  const client = new Redis(url);
  try {
    const settings: Record<string, unknown> = {
      redis_version: /redis_version:(\S+)/.exec(await client.info('server'))?.[1],
    };
    for (const name of ['appendonly', 'appendfsync', 'save']) {
      const [, value] = (await client.config('GET', name)) as [string, string];
      settings[name] = value;
    }
    return settings;
  } finally {
    await client.quit();
  }
}
