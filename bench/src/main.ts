/**
 * `pnpm bench`: every backend against its raw driver, its scaling, and its peers, side by side
 * in one run. Prints tables and writes bench/results/latest.json.
 *   CKPT_BENCH_QUICK=1          a short run (smaller plans and databases)
 *   CKPT_BENCH_BACKENDS=a,b     only these backends (default: sqlite,postgres,mysql,redis)
 *   CKPT_BENCH_ONLY=chats       only the chat table (@ckpt/ai-sdk against the recipe)
 *   CKPT_BENCH_ONLY=retention   only the retention table (sweeps and prunes against raw DELETEs)
 *   CKPT_BENCH_RETENTION=a,b    only these of its contenders (sweep native, sweep portable,
 *                               sweep raw, prune, prune raw)
 *   CKPT_BENCH_ONLY=concurrency only the concurrency table, in CKPT_BENCH_ROUNDS interleaved
 *                               rounds (default 5)
 *   CKPT_BENCH_ONLY=codecs      only the codecs' tables (compression and encryption)
 *   CKPT_BENCH_ONLY=layout      only the bound of a layout of one row a checkpoint on PostgreSQL
 *   CKPT_BENCH_ONLY=watch       only watch(): commit to event, 1,000 watchers, writers beside them
 *   CKPT_BENCH_ONLY=tags        only tags: a filtered page as the store grows to 1,000,000 sessions,
 *                               and LangGraph's cross-thread list with a filter beside PostgresSaver's
 *   CKPT_TEST_POSTGRES_URL      the PostgreSQL server (default: the local one)
 *   CKPT_TEST_MYSQL_URL         the MySQL / MariaDB server (default: the local one)
 *   CKPT_TEST_REDIS_URL         the Redis server (default: the local one)
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { benchChats, type ChatRow, printChats } from './chat-bench.js';
import { benchCodecs } from './codec-bench.js';
import { printConcurrency } from './concurrency.js';
import { postgresConcurrency, sqliteConcurrency } from './concurrency-bench.js';
import { benchCopy, printCopy } from './copy-bench.js';
import { benchLangGraph } from './langgraph-bench.js';
import { benchLangGraphList, printLangGraphList } from './langgraph-list-bench.js';
import { layoutBound } from './layout-bound.js';
import type { Plan } from './measure.js';
import { benchMysql, mysqlSettings } from './mysql.js';
import { benchPostgres, postgresSettings } from './postgres.js';
import { benchRedis, redisSettings } from './redis.js';
import { printStorage, printTable, type Row, writeJson } from './report.js';
import { benchRetention, printRetention } from './retention-bench.js';
import type { Sizes } from './scenarios.js';
import { benchSqlite, sqliteSettings } from './sqlite.js';
import { benchTags, printTags } from './tags-bench.js';
import { benchWatch, printWatch } from './watch-bench.js';

const quick = process.env.CKPT_BENCH_QUICK === '1';
const plan: Plan = quick
  ? { rounds: 4, perRound: 25, warmup: 10, warmupMs: 100 }
  : { rounds: 20, perRound: 50, warmup: 50, warmupMs: 1000 };
const large: Sizes = quick
  ? { sessions: 10_000, checkpoints: 2_000 }
  : { sessions: 100_000, checkpoints: 10_000 };
const backends = (process.env.CKPT_BENCH_BACKENDS ?? 'sqlite,postgres,mysql,redis').split(',');
const postgresUrl = process.env.CKPT_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test';
const mysqlUrl = process.env.CKPT_TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306/test';
const redisUrl = process.env.CKPT_TEST_REDIS_URL || 'redis://127.0.0.1:6379';

const chatLengths = [10, 1_000, 10_000];
const stepsFor = (agents: number) => Math.ceil((quick ? 200 : 1200) / agents);

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'ckpt-bench-'));
  if (process.env.CKPT_BENCH_ONLY === 'chats') return chatsOnly(dir);
  if (process.env.CKPT_BENCH_ONLY === 'retention') return retentionOnly(dir);
  if (process.env.CKPT_BENCH_ONLY === 'concurrency') return concurrencyOnly(dir);
  if (process.env.CKPT_BENCH_ONLY === 'codecs') return codecsOnly(dir);
  if (process.env.CKPT_BENCH_ONLY === 'layout') return layoutOnly(dir);
  if (process.env.CKPT_BENCH_ONLY === 'watch') return watchOnly(dir);
  if (process.env.CKPT_BENCH_ONLY === 'tags') return tagsOnly(dir);
  try {
    const settings: Record<string, unknown> = {};
    const rows: Row[] = [];
    console.log('ckpt benchmark', quick ? '(quick)' : '', `node ${process.version}`);
    if (backends.includes('sqlite')) {
      settings.sqlite = sqliteSettings(dir);
      rows.push(...(await benchSqlite(dir, plan, large)));
    }
    if (backends.includes('postgres')) {
      settings.postgres = await postgresSettings(postgresUrl);
      rows.push(...(await benchPostgres(postgresUrl, plan, large)));
    }
    if (backends.includes('mysql')) {
      settings.mysql = await mysqlSettings(mysqlUrl);
      rows.push(...(await benchMysql(mysqlUrl, plan, large)));
    }
    if (backends.includes('redis')) {
      settings.redis = await redisSettings(redisUrl);
      rows.push(...(await benchRedis(redisUrl, plan, large)));
    }
    const langgraph = await benchLangGraph(
      backends,
      dir,
      { postgres: postgresUrl, mysql: mysqlUrl, redis: redisUrl },
      plan,
      quick ? 100 : 1000,
    );
    rows.push(...langgraph.rows);
    const concurrent = [
      ...(backends.includes('sqlite') ? await sqliteConcurrency(dir, stepsFor) : []),
      ...(backends.includes('postgres') ? await postgresConcurrency(postgresUrl, stepsFor) : []),
    ];
    const copies =
      backends.includes('sqlite') && backends.includes('postgres')
        ? await benchCopy(dir, postgresUrl, quick ? [1_000, 10_000] : [10_000, 100_000])
        : [];
    const chats = await benchChats(backends, dir, postgresUrl, plan, chatLengths);
    console.log('durability settings:', JSON.stringify(settings));
    printTable(
      'ckpt against the raw driver on the same connection (ratio: median time per op)',
      rows.filter((r) => r.group === 'vs raw driver'),
    );
    printTable(
      'Scaling: cost at a large session and catalog against a small one (ratio: median)',
      rows.filter((r) => r.group === 'scaling'),
    );
    printTable(
      'Agent loop (save 10 KiB + 2 transcript items, load latest) against peers (ratio: throughput)',
      rows.filter((r) => r.group === 'vs peer'),
    );
    printTable(
      'LangGraph: one StateGraph invoke a step (10 KiB state, two messages) on each saver (ratio: throughput)',
      rows.filter((r) => r.group === 'langgraph'),
    );
    printStorage(
      `LangGraph: bytes in the database after ${quick ? 100 : 1000} steps on one thread`,
      langgraph.storage,
    );
    printConcurrency(concurrent);
    printCopy(copies);
    printChats(chats);
    const out = fileURLToPath(new URL('../results/latest.json', import.meta.url));
    writeJson(out, {
      when: new Date().toISOString(),
      node: process.version,
      quick,
      plan,
      large,
      settings,
      rows,
      storage: langgraph.storage,
      concurrency: concurrent,
      copy: copies,
      chats,
    });
    console.log(`\nwritten to ${out}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/**
 * One table alone (`CKPT_BENCH_ONLY=<name>`): the durability settings, then `run`'s rows,
 * printed by it and written to bench/results/<name>.json with what it adds.
 */
async function tableOnly(
  dir: string,
  name: string,
  run: () => Promise<Record<string, unknown>>,
  about = '',
) {
  try {
    console.log(
      `ckpt benchmark, ${name}`,
      quick ? '(quick)' : '',
      `node ${process.version}${about}`,
    );
    const settings = {
      ...(backends.includes('sqlite') ? { sqlite: sqliteSettings(dir) } : {}),
      ...(backends.includes('postgres') ? { postgres: await postgresSettings(postgresUrl) } : {}),
    };
    console.log('durability settings:', JSON.stringify(settings));
    const rows = await run();
    const out = fileURLToPath(new URL(`../results/${name}.json`, import.meta.url));
    writeJson(out, {
      when: new Date().toISOString(),
      node: process.version,
      quick,
      settings,
      ...rows,
    });
    console.log(`\nwritten to ${out}`);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}

/** The tags table alone: a filtered page as one store grows. */
function tagsOnly(dir: string) {
  return tableOnly(dir, 'tags', async () => {
    const sizes = quick ? [5_000, 10_000, 50_000] : [10_000, 100_000, 1_000_000];
    const reps = quick ? 50 : 300;
    const tags = await benchTags(backends, dir, postgresUrl, sizes, reps);
    printTags(tags);
    // LangGraph's cross-thread list with a filter, ckpt's saver beside PostgresSaver.
    const langgraphList = backends.includes('postgres')
      ? {
          sizes: quick ? [2_000, 5_000] : [2_000, 10_000, 100_000],
          reps: quick ? 30 : 100,
          walkReps: quick ? 5 : 10,
        }
      : null;
    const langgraphListRows = langgraphList
      ? await benchLangGraphList(
          postgresUrl,
          langgraphList.sizes,
          langgraphList.reps,
          langgraphList.walkReps,
        )
      : [];
    if (langgraphList) printLangGraphList(langgraphListRows);
    return {
      sizes,
      reps,
      tags,
      langgraphList: langgraphList && { ...langgraphList, rows: langgraphListRows },
    };
  });
}

/** The chat table alone. */
function chatsOnly(dir: string) {
  return tableOnly(dir, 'chats', async () => {
    const chats: ChatRow[] = await benchChats(backends, dir, postgresUrl, plan, chatLengths);
    printChats(chats);
    return { plan, chats };
  });
}

/** The codecs' tables alone: compression and encryption against none. */
function codecsOnly(dir: string) {
  return tableOnly(dir, 'codecs', async () => {
    const steps = quick ? 100 : 1000;
    const servers = { postgres: postgresUrl, mysql: mysqlUrl, redis: redisUrl };
    const { rows, storage } = await benchCodecs(backends, dir, servers, plan, steps);
    printTable('Codecs: checkpoint and load against no codecs (ratio: median time per op)', rows);
    printStorage(
      `LangGraph: bytes in the database after ${steps} steps on one thread, ckpt with gzip`,
      storage,
    );
    return { plan, rows, storage };
  });
}

/** What a layout of one row a checkpoint would hold on PostgreSQL, part by part. */
function layoutOnly(dir: string) {
  return tableOnly(dir, 'layout', async () => {
    const steps = quick ? 100 : 1000;
    const layout = await layoutBound(postgresUrl, steps);
    console.log(
      `\nPostgreSQL: bytes after LangGraph's ${steps} steps with gzip, and in other layouts`,
    );
    console.table(layout.map((row) => ({ part: row.part, bytes: row.bytes.toLocaleString('en') })));
    return { steps, layout };
  });
}

/** The watch table alone: commit to event, 1,000 watchers, writers with watchers on. */
function watchOnly(dir: string) {
  return tableOnly(dir, 'watch', async () => {
    const watch = await benchWatch(
      backends,
      dir,
      { postgres: postgresUrl, mysql: mysqlUrl, redis: redisUrl },
      plan,
    );
    printWatch(watch);
    return { plan, watch };
  });
}

/** The retention table alone: sweeps and prunes against raw DELETEs. */
function retentionOnly(dir: string) {
  return tableOnly(dir, 'retention', async () => {
    const sizes = quick ? [1_000, 10_000] : [10_000, 100_000];
    const rows = await benchRetention(backends, dir, postgresUrl, sizes);
    printRetention(rows);
    return { rows };
  });
}

/** The concurrency table alone, in interleaved rounds. */
function concurrencyOnly(dir: string) {
  const rounds = Number(process.env.CKPT_BENCH_ROUNDS ?? 5);
  return tableOnly(
    dir,
    'concurrency',
    async () => {
      const concurrent = [
        ...(backends.includes('sqlite') ? await sqliteConcurrency(dir, stepsFor, rounds) : []),
        ...(backends.includes('postgres')
          ? await postgresConcurrency(postgresUrl, stepsFor, rounds)
          : []),
      ];
      printConcurrency(concurrent);
      return { rounds, concurrency: concurrent };
    },
    `, ${rounds} rounds`,
  );
}

main().catch((err) => {
  console.error(err);
  process.exit(1);
});
