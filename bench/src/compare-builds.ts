/**
 * `pnpm --filter @ckpt/bench compare -- --baseline <dir>`: this checkout's backends against
 * another build of them (a worktree of an earlier commit, installed and built), in one process.
 * Each operation runs on both builds interleaved, round after round in rotating order, so that
 * the drift of a busy machine falls on both alike; the table gives each build's median time
 * per operation and the ratio new / baseline. Both builds are imported from their dist, as
 * users get them (run `pnpm build` in each first), never from this checkout's sources.
 *   --baseline <dir>           the other checkout (absolute, or from bench/); its
 *                              packages/<name>/dist are imported
 *   CKPT_BENCH_QUICK=1         a short run
 *   CKPT_BENCH_BACKENDS=a,b    only these backends (default: memory,sqlite,postgres,mysql,redis)
 *   CKPT_TEST_POSTGRES_URL, CKPT_TEST_MYSQL_URL, CKPT_TEST_REDIS_URL  the servers
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { parseArgs } from 'node:util';
import { interleaved, type Plan } from './measure.js';
import { agentState } from './payloads.js';

/** What the comparison uses of a build's store: the public API, whichever build made it. */
interface Store {
  checkpoint(id: string, value: unknown, options?: { transcript?: unknown[] }): Promise<unknown>;
  load(id: string): Promise<unknown>;
  list(id: string, page: { limit: number }): Promise<unknown>;
  transcript(id: string, page: { limit: number }): Promise<unknown>;
  prune(id: string, options: { keepLast: number }): Promise<number>;
  destroy(): Promise<void>;
  close(): Promise<void>;
}

/** One build: where its packages are, and how to import one of them. */
interface Build {
  name: 'new' | 'landed';
  load(pkg: string): Promise<Record<string, unknown>>;
}

// pnpm passes the `--` that separates its own options along.
const { values } = parseArgs({
  args: process.argv.slice(2).filter((arg) => arg !== '--'),
  options: { baseline: { type: 'string' } },
});
if (!values.baseline) {
  console.error('usage: pnpm --filter @ckpt/bench compare -- --baseline <dir of the other build>');
  process.exit(2);
}
const baseline = resolve(process.cwd(), values.baseline);
const quick = process.env.CKPT_BENCH_QUICK === '1';
const plan: Plan = quick
  ? { rounds: 6, perRound: 25, warmup: 20, warmupMs: 200 }
  : { rounds: 30, perRound: 40, warmup: 50, warmupMs: 1000 };
const backends = (process.env.CKPT_BENCH_BACKENDS ?? 'memory,sqlite,postgres,mysql,redis').split(
  ',',
);
const urls = {
  postgres: process.env.CKPT_TEST_POSTGRES_URL || 'postgres://postgres@127.0.0.1:5432/test',
  mysql: process.env.CKPT_TEST_MYSQL_URL || 'mysql://root@127.0.0.1:3306/test',
  redis: process.env.CKPT_TEST_REDIS_URL || 'redis://127.0.0.1:6379',
};

/** A checkout's build of a package: its dist, which imports that checkout's own core. */
const built = (checkout: string) => (pkg: string) =>
  import(pathToFileURL(join(checkout, 'packages', pkg, 'dist', 'index.js')).href);
const builds: Build[] = [
  { name: 'new', load: built(fileURLToPath(new URL('../..', import.meta.url))) },
  { name: 'landed', load: built(baseline) },
];

/** A store of `backend` on `build`, in a namespace of its own. */
async function open(build: Build, backend: string, dir: string): Promise<Store> {
  const core = await build.load('core');
  const factory = (await build.load(backend))[backend] as (options: object) => unknown;
  const namespace = `bench_compare_${build.name}`;
  const options =
    backend === 'memory'
      ? {}
      : backend === 'sqlite'
        ? { path: join(dir, `${build.name}.db`), namespace }
        : { url: urls[backend as keyof typeof urls], namespace };
  const Store = core.CheckpointStore as new (backend: unknown) => Store;
  return new Store(factory(options));
}

const KIB = 1024;
const SESSION = 'compare';
/** Checkpoints in the session before the reads: more than a page, so that a page is full. */
const FILL = 30;
const PAGE = 10;

interface Line {
  backend: string;
  operation: string;
  newUs: number;
  landedUs: number;
}

async function compare(backend: string, dir: string): Promise<Line[]> {
  const stores = await Promise.all(builds.map((build) => open(build, backend, dir)));
  const body = agentState(10 * KIB);
  const said = ['user', 'agent'];
  for (const store of stores) {
    for (let i = 0; i < FILL; i++) {
      await store.checkpoint(SESSION, agentState(10 * KIB, i), { transcript: said });
    }
  }
  const operations: [string, (store: Store) => Promise<unknown>][] = [
    ['checkpoint (10 KiB)', (s) => s.checkpoint(SESSION, body, { transcript: said })],
    ['load head', (s) => s.load(SESSION)],
    [`list page (${PAGE})`, (s) => s.list(SESSION, { limit: PAGE })],
    [`transcript page (${PAGE})`, (s) => s.transcript(SESSION, { limit: PAGE })],
  ];
  const lines: Line[] = [];
  try {
    for (const [operation, op] of operations) {
      const stats = await interleaved(
        builds.map((build, i) => ({ name: build.name, op: () => op(stores[i]!) })),
        plan,
        // Outside the timing: keep the session at its size, so that both builds read and write
        // the same amount and an in-memory server does not fill up.
        () => Promise.all(stores.map((store) => store.prune(SESSION, { keepLast: FILL }))),
      );
      lines.push({
        backend,
        operation,
        newUs: stats.get('new')!.p50Us,
        landedUs: stats.get('landed')!.p50Us,
      });
    }
  } finally {
    for (const store of stores) {
      if (backend !== 'memory') await store.destroy();
      await store.close();
    }
  }
  return lines;
}

async function main() {
  const dir = mkdtempSync(join(tmpdir(), 'ckpt-compare-'));
  console.log(
    `ckpt build comparison ${quick ? '(quick) ' : ''}node ${process.version}, baseline ${baseline}`,
  );
  console.log(
    `plan: ${plan.rounds} rounds of ${plan.perRound} calls a build, warmup ${plan.warmup} calls and ${plan.warmupMs} ms`,
  );
  const lines: Line[] = [];
  try {
    for (const backend of backends) lines.push(...(await compare(backend, dir)));
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
  const pad = (text: string, n: number) => text.padEnd(n);
  console.log(
    `\n${pad('backend', 10)}${pad('operation', 24)}${pad('new µs', 10)}${pad('landed µs', 11)}new / landed`,
  );
  for (const line of lines) {
    console.log(
      `${pad(line.backend, 10)}${pad(line.operation, 24)}${pad(line.newUs.toFixed(1), 10)}${pad(line.landedUs.toFixed(1), 11)}${(line.newUs / line.landedUs).toFixed(3)}`,
    );
  }
}

await main();
