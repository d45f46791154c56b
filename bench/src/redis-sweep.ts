/**
 * `pnpm --filter @ckpt/bench redis-sweep`: `sweep({ idleFor })` on Redis, the way it goes
 * without native help (a page of the catalog, then `deleteIdle` on each of its sessions)
 * against `deleteIdleBatch`, on the same contents: idle sessions of 10 checkpoints each.
 * Prints sessions a second.
 *   CKPT_BENCH_SWEEP_SESSIONS=10000     how many sessions (default 10,000)
 *   CKPT_BENCH_SWEEP_ROUNDS=3           how many times each, in turns (default 3)
 *   CKPT_BENCH_SWEEP_CLUSTER=1          on the cluster too (CKPT_TEST_REDIS_CLUSTER_URL)
 *   CKPT_TEST_REDIS_URL                 the Redis server (default: the local one)
 */
import { performance } from 'node:perf_hooks';
import { type CheckpointBackend, CheckpointStore } from '@ckpt/core';
import type { ExportedStoredCheckpoint } from '@ckpt/core/adapter';
import { type RedisBackend, type RedisClient, redis } from '@ckpt/redis';
import { Cluster, Redis } from 'ioredis';

const sessions = Number(process.env.CKPT_BENCH_SWEEP_SESSIONS ?? 10_000);
const checkpointsEach = 10;
const rounds = Number(process.env.CKPT_BENCH_SWEEP_ROUNDS ?? 3);
const redisUrl = process.env.CKPT_TEST_REDIS_URL || 'redis://127.0.0.1:6379';
const clusterUrl = process.env.CKPT_TEST_REDIS_CLUSTER_URL || 'redis://127.0.0.1:7000';
const clientOptions = { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 };
const stamp = Date.now().toString(36);

/** Fill `backend` with the idle sessions, written at 1,000 ms since the epoch, 64 at a time. */
async function fill(backend: RedisBackend): Promise<void> {
  const checkpoints: ExportedStoredCheckpoint[] = Array.from(
    { length: checkpointsEach },
    (_, i) => ({
      seq: i + 1,
      parent: i === 0 ? null : i,
      data: JSON.stringify({ step: i + 1, note: 'x'.repeat(200) }),
      metadata: '{}',
      createdAt: 1_000,
      pinned: false,
      pinNote: null,
      transcript: '[]',
      needs: [],
    }),
  );
  let next = 0;
  await Promise.all(
    Array.from({ length: 64 }, async () => {
      while (next < sessions) {
        const sessionId = `session-${next++}`;
        await backend.importSession({
          sessionId,
          head: checkpointsEach,
          forkedFrom: null,
          createdAt: 1_000,
          updatedAt: 1_000,
          checkpoints,
          replace: false,
        });
      }
    }),
  );
}

/**
 * The backend as a sweep without native help sees it: every method but deleteIdleBatch, so
 * that `sweep()` pages the catalog and calls deleteIdle on each session.
 */
function withoutBatches(backend: RedisBackend): CheckpointBackend {
  return new Proxy(backend, {
    get(target, property) {
      if (property === 'deleteIdleBatch') return undefined;
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

async function measure(where: string, client: RedisClient): Promise<void> {
  const ways: [string, (backend: RedisBackend) => CheckpointBackend][] = [
    ['sweep, deleteIdle on each session', withoutBatches],
    ['sweep, deleteIdleBatch', (backend) => backend],
  ];
  // In turns, so that neither way always runs on a warmer server.
  for (let round = 1; round <= rounds; round++) {
    for (const [name, seenAs] of ways) {
      const backend = redis({ client, namespace: `bench_${stamp}_sweep_${round}` });
      await fill(backend);
      const store = new CheckpointStore(seenAs(backend));
      const started = performance.now();
      const swept = await store.sweep({ idleFor: 1 });
      const seconds = (performance.now() - started) / 1000;
      if (swept.sessions !== sessions) {
        throw new Error(`${name} deleted ${swept.sessions} of ${sessions}`);
      }
      console.log(
        `${where} | ${name} | round ${round} | ${Math.round(sessions / seconds).toLocaleString('en-US')} sessions/s`,
      );
      await backend.destroy();
      await backend.close();
    }
  }
}

async function main() {
  console.log(
    `redis sweep: ${sessions.toLocaleString('en-US')} idle sessions of ${checkpointsEach} checkpoints, node ${process.version}`,
  );
  const single = new Redis(redisUrl, clientOptions);
  try {
    await measure('single server', single);
  } finally {
    await single.quit();
  }
  if (process.env.CKPT_BENCH_SWEEP_CLUSTER === '1') {
    const seed = new URL(clusterUrl);
    const cluster = new Cluster([{ host: seed.hostname, port: Number(seed.port || 7000) }], {
      redisOptions: clientOptions,
    });
    try {
      await measure('cluster, 3 masters', cluster);
    } finally {
      await cluster.quit();
    }
  }
}

await main();
