/**
 * `watch()`: from the commit of a checkpoint on one connection to its event on another; a
 * thousand watchers of different sessions in one process (memory, server connections); and
 * what watchers cost the writers, writes with watchers on beside writes with none.
 */
import { type ChildProcess, fork } from 'node:child_process';
import { once, setMaxListeners } from 'node:events';
import { join } from 'node:path';
import { type CheckpointBackend, CheckpointStore, kvBackend } from '@ckpt/core';
import { memory } from '@ckpt/memory';
import { mysql } from '@ckpt/mysql';
import { postgres } from '@ckpt/postgres';
import { redis } from '@ckpt/redis';
import { sqlite, sqliteKv } from '@ckpt/sqlite';
import { Redis } from 'ioredis';
import pg from 'pg';
import { interleaved, type Plan, type Variant } from './measure.js';
import { agentState } from './payloads.js';

/** One backend's figures. */
export interface WatchRow {
  backend: string;
  /** Commit to event, in µs: the write's promise resolving to the event arriving. */
  latencyP50Us: number;
  latencyP99Us: number;
  /** 1,000 watchers of different sessions: bytes of heap they added, and server connections. */
  thousandHeapBytes: number;
  thousandConnections: number | null;
  /** Checkpoints per second with 10 watchers of other sessions on, over none. */
  writersWithWatchers: number;
  /** The same with the 10 watchers in another process, where the store can be opened there. */
  writersWithWatchersElsewhere: number | null;
}

interface Target {
  backend: string;
  /** Two backends on the same storage, as two processes would open it. */
  open(): { writer: CheckpointBackend; watcher: CheckpointBackend };
  /** The storage as `openStore` takes it, for watchers in another process. */
  url?: string;
  /** The server connections the watchers hold now, where there is a server. */
  connections?(): Promise<number>;
  cleanup?(): Promise<void>;
}

const LATENCY_SAMPLES = 300;

function quantile(sorted: number[], q: number): number {
  return sorted[Math.min(sorted.length - 1, Math.floor(q * sorted.length))]!;
}

async function measure(target: Target, plan: Plan): Promise<WatchRow> {
  const { writer: w, watcher: r } = target.open();
  const writer = new CheckpointStore(w);
  const watcher = new CheckpointStore(r);
  try {
    await writer.checkpoint('warm', 1);
    const stream = watcher.watch({ sessionId: 'latency' });
    await stream.ready;
    const events = stream[Symbol.asyncIterator]();
    const latencies: number[] = [];
    for (let i = 0; i < LATENCY_SAMPLES; i++) {
      const arrived = events.next().then(() => performance.now());
      await writer.checkpoint('latency', { i });
      const committed = performance.now();
      latencies.push(((await arrived) - committed) * 1000);
    }
    await events.return?.();
    latencies.sort((a, b) => a - b);

    globalThis.gc?.();
    const heapBefore = process.memoryUsage().heapUsed;
    const controller = new AbortController();
    // One signal for a thousand watchers: each listens to it.
    setMaxListeners(2_000, controller.signal);
    const thousand = Array.from({ length: 1000 }, (_, i) =>
      watcher.watch({ sessionId: `many-${i}`, signal: controller.signal }),
    );
    await Promise.all(thousand.map((s) => s.ready));
    await new Promise((resolve) => setTimeout(resolve, 300));
    globalThis.gc?.();
    const heapAfter = process.memoryUsage().heapUsed;
    const connections = (await target.connections?.()) ?? null;
    controller.abort();

    // Writers alone, then with ten watchers of other sessions on, started before each of its
    // rounds and stopped after, outside the timing; interleaved rounds.
    const state = agentState(10 * 1024);
    let n = 0;
    const write = () => writer.checkpoint(`write-${n++ % 16}`, state);
    let on: AbortController | undefined;
    const result = await interleaved(
      [
        { name: 'none', op: write },
        {
          name: 'ten',
          op: write,
          enter: async () => {
            on = new AbortController();
            const streams = Array.from({ length: 10 }, (_, i) =>
              watcher.watch({ sessionId: `other-${i}`, signal: on!.signal }),
            );
            await Promise.all(streams.map((s) => s.ready));
          },
          leave: async () => on?.abort(),
        },
        ...(target.url === undefined ? [] : [elsewhere(target.url, write)]),
      ],
      plan,
    );
    return {
      backend: target.backend,
      latencyP50Us: quantile(latencies, 0.5),
      latencyP99Us: quantile(latencies, 0.99),
      thousandHeapBytes: heapAfter - heapBefore,
      thousandConnections: connections,
      writersWithWatchers: result.get('ten')!.opsPerSec / result.get('none')!.opsPerSec,
      writersWithWatchersElsewhere:
        target.url === undefined
          ? null
          : result.get('elsewhere')!.opsPerSec / result.get('none')!.opsPerSec,
    };
  } finally {
    await watcher.close();
    await writer.close();
    await target.cleanup?.();
  }
}

/** `url` with `?namespace=`. */
function withNamespace(url: string, namespace: string): string {
  const at = new URL(url);
  at.searchParams.set('namespace', namespace);
  return at.toString();
}

/** The writes `write`, with ten watchers of other sessions on in a process of their own. */
function elsewhere(url: string, write: () => unknown): Variant {
  let child: ChildProcess | undefined;
  return {
    name: 'elsewhere',
    op: write,
    enter: async () => {
      child = fork(new URL('./watch-child.ts', import.meta.url), [url], {
        execArgv: process.execArgv,
      });
      const [message] = await once(child, 'message');
      if (message !== 'ready') throw new Error(`the watching process said ${String(message)}`);
    },
    leave: async () => {
      const exited = once(child!, 'exit');
      child!.disconnect();
      await exited;
    },
  };
}

/** The rows of `backends` that have a change log. */
export async function benchWatch(
  backends: string[],
  dir: string,
  servers: { postgres: string; mysql: string; redis: string },
  plan: Plan,
): Promise<WatchRow[]> {
  const postgresUrl = servers.postgres;
  const targets: Target[] = [];
  const shared = memory();
  if (backends.includes('memory') || backends.includes('sqlite')) {
    targets.push({ backend: 'memory', open: () => ({ writer: shared, watcher: shared }) });
  }
  if (backends.includes('sqlite')) {
    const path = join(dir, 'watch.db');
    targets.push({
      backend: 'sqlite',
      open: () => ({ writer: sqlite({ path }), watcher: sqlite({ path }) }),
      url: `sqlite:${path}`,
    });
    const kvPath = join(dir, 'watch-kv.db');
    targets.push({
      backend: 'kvBackend(sqliteKv)',
      open: () => ({
        writer: kvBackend(sqliteKv({ path: kvPath })),
        watcher: kvBackend(sqliteKv({ path: kvPath })),
      }),
    });
  }
  if (backends.includes('postgres')) {
    const namespace = `bench_${Date.now().toString(36)}_watch`;
    const admin = new pg.Pool({ connectionString: postgresUrl, max: 1 });
    targets.push({
      backend: 'postgres',
      open: () => ({
        writer: postgres({ url: postgresUrl, namespace }),
        watcher: postgres({ url: postgresUrl, namespace }),
      }),
      url: withNamespace(postgresUrl, namespace),
      connections: async () => {
        const { rows } = await admin.query<{ n: number }>(
          'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
          [`ckpt watch: ${namespace}`],
        );
        return rows[0]!.n;
      },
      cleanup: async () => {
        await admin.query(`DROP SCHEMA IF EXISTS ${namespace} CASCADE`);
        await admin.end();
      },
    });
  }
  if (backends.includes('mysql')) {
    const namespace = `bench_${Date.now().toString(36)}_watch`;
    targets.push({
      backend: 'mysql',
      open: () => ({
        writer: mysql({ url: servers.mysql, namespace }),
        watcher: mysql({ url: servers.mysql, namespace }),
      }),
      url: withNamespace(servers.mysql, namespace),
      cleanup: () => new CheckpointStore(mysql({ url: servers.mysql, namespace })).destroy(),
    });
  }
  if (backends.includes('redis')) {
    const namespace = `bench_${Date.now().toString(36)}_watch`;
    const admin = new Redis(servers.redis);
    targets.push({
      backend: 'redis',
      open: () => ({
        writer: redis({ url: servers.redis, namespace }),
        watcher: redis({ url: servers.redis, namespace }),
      }),
      url: withNamespace(servers.redis, namespace),
      connections: async () => {
        const list = String(await admin.client('LIST'));
        return list.split('\n').filter((line) => line.includes(`name=ckpt-watch-${namespace}`))
          .length;
      },
      cleanup: async () => {
        await new CheckpointStore(redis({ url: servers.redis, namespace })).destroy();
        admin.disconnect();
      },
    });
  }
  const rows: WatchRow[] = [];
  for (const target of targets) rows.push(await measure(target, plan));
  return rows;
}

/** The watch table, as the bench prints it. */
export function printWatch(rows: WatchRow[]): void {
  console.log('\nwatch(): commit to event, 1,000 watchers, writers with watchers on');
  console.table(
    rows.map((row) => ({
      backend: row.backend,
      'p50 µs': Math.round(row.latencyP50Us),
      'p99 µs': Math.round(row.latencyP99Us),
      '1,000 watchers: heap KiB': Math.round(row.thousandHeapBytes / 1024),
      '1,000 watchers: connections': row.thousandConnections ?? '-',
      'writes with 10 watchers / none': row.writersWithWatchers.toFixed(3),
      'the same, watchers in another process': row.writersWithWatchersElsewhere?.toFixed(3) ?? '-',
    })),
  );
}
