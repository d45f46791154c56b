/**
 * `pnpm --filter @ckpt/bench redis-sweep`: deleting idle sessions on Redis, the way a sweep
 * goes without native help (a page of the catalog, then `deleteIdle` on each of its sessions,
 * the page's calls sent at once) against `deleteIdleBatch`, on the same contents: idle
 * sessions of 10 checkpoints each. Prints sessions a second.
 *   CKPT_BENCH_SWEEP_SESSIONS=10000     how many sessions (default 10,000)
 *   CKPT_BENCH_SWEEP_CLUSTER=1          on the cluster too (CKPT_TEST_REDIS_CLUSTER_URL)
 *   CKPT_TEST_REDIS_URL                 the Redis server (default: the local one)
 */
import { performance } from 'node:perf_hooks';
import type { ExportedStoredCheckpoint, SessionPosition } from '@ckpt/core/adapter';
import { type RedisBackend, type RedisClient, redis } from '@ckpt/redis';
import { Cluster, Redis } from 'ioredis';

const sessions = Number(process.env.CKPT_BENCH_SWEEP_SESSIONS ?? 10_000);
const checkpointsEach = 10;
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

/** Without native help: a page of sessions, then deleteIdle on each, the page's calls at once. */
async function pagesThenDeleteIdle(backend: RedisBackend, page: number): Promise<number> {
  let deleted = 0;
  let after: SessionPosition | null = null;
  for (;;) {
    const listed = await backend.sessions({ after, limit: page, prefix: '' });
    if (listed.length === 0) return deleted;
    const decided = await Promise.all(
      listed.map((s) => backend.deleteIdle(s.sessionId, 2_000, false)),
    );
    deleted += decided.filter((d) => d.status === 'deleted').length;
    const last = listed.at(-1)!;
    after = { updatedAt: last.updatedAt, sessionId: last.sessionId };
  }
}

/** With native help: deleteIdleBatch until none is left. */
async function batches(backend: RedisBackend, limit: number): Promise<number> {
  let deleted = 0;
  for (;;) {
    const gone = await backend.deleteIdleBatch({ idleBefore: 2_000, limit });
    if (gone.sessions === 0) return deleted;
    deleted += gone.sessions;
  }
}

async function measure(where: string, client: RedisClient): Promise<void> {
  const ways: [string, (backend: RedisBackend) => Promise<number>][] = [
    ['pages of 100, deleteIdle each', (b) => pagesThenDeleteIdle(b, 100)],
    ['deleteIdleBatch, limit 100', (b) => batches(b, 100)],
    ['deleteIdleBatch, limit 1000', (b) => batches(b, 1000)],
  ];
  // Twice each, in turns, so that neither way always runs on a warmer server.
  for (const round of [1, 2]) {
    for (const [name, sweep] of ways) {
      const backend = redis({ client, namespace: `bench_${stamp}_sweep_${round}` });
      await fill(backend);
      const started = performance.now();
      const deleted = await sweep(backend);
      const seconds = (performance.now() - started) / 1000;
      if (deleted !== sessions) throw new Error(`${name} deleted ${deleted} of ${sessions}`);
      console.log(
        `${where} | ${name} | ${Math.round(deleted / seconds).toLocaleString('en-US')} sessions/s`,
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
