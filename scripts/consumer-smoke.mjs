#!/usr/bin/env node
// `pnpm test:consumer`: what a user gets from npm. Packs every published package, installs
// the tarballs with npm into fresh projects outside the workspace, then
//   1. imports each package from ESM and requires it from CJS, with a checkpoint round trip
//      on every backend (the servers' URLs as in the tests: CKPT_TEST_*_URL or the defaults),
//      and runs the installed `ckpt` command, and type-checks a TypeScript consumer under the
//      strictest compiler options;
//   2. runs examples/custom-adapter's contract tests against the installed @ckpt/core and
//      @ckpt/contract-tests, as an outside author would.
// Prints each tarball's files and size. Exits non-zero on the first failure.
import { execFileSync, spawnSync } from 'node:child_process';
import {
  cpSync,
  existsSync,
  mkdirSync,
  mkdtempSync,
  readFileSync,
  rmSync,
  writeFileSync,
} from 'node:fs';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';

const root = resolve(import.meta.dirname, '..');
const work = mkdtempSync(join(tmpdir(), 'ckpt-consumer-'));
const run = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, stdio: 'inherit', env: process.env });
const read = (cmd, args, cwd) =>
  execFileSync(cmd, args, { cwd, encoding: 'utf8', env: process.env });

const PUBLISHED = [
  'core',
  'memory',
  'sqlite',
  'postgres',
  'pglite',
  'mysql',
  'redis',
  'langgraph',
  'openai-agents',
  'ai-sdk',
  'cli',
].map((p) => `packages/${p}`);
PUBLISHED.push('contract-tests');
// Each driver at the lowest version its peer range allows: the workspace's own tests run the
// newest (the lockfile's), so both ends of every declared range are exercised.
const DRIVERS = PUBLISHED.flatMap((dir) =>
  Object.entries(
    JSON.parse(readFileSync(join(root, dir, 'package.json'), 'utf8')).peerDependencies ?? {},
  )
    .filter(([name]) => !name.startsWith('@ckpt/') && name !== 'vitest')
    // The first alternative of the range, without its caret: `^5.3.0 || ^6.0.0` gives 5.3.0.
    .map(([name, range]) => `${name}@${range.split('||')[0].trim().replace(/^\^/, '')}`),
);
const TEST_TOOLS = ['vitest@4.1.12', 'vite@8.3.8'];
const MAKE_STORE = `require('@ckpt/core').openStore('sqlite:./cli.db').then((store) => store.close())`;

async function main() {
  try {
    console.log('=== build and pack');
    run('pnpm', ['build', '--output-logs=errors-only'], root);
    const tarballs = {};
    for (const dir of PUBLISHED) {
      const out = join(work, 'tarballs');
      mkdirSync(out, { recursive: true });
      // pnpm pack turns workspace: ranges into the real versions, as publishing does.
      const packed = JSON.parse(
        read('pnpm', ['pack', '--json', '--pack-destination', out], join(root, dir)),
      );
      const name = packed.name;
      tarballs[name] = packed.filename;
      const listing = JSON.parse(
        read('npm', ['pack', '--dry-run', '--json', packed.filename], out),
      )[0];
      console.log(
        `${name}: ${(listing.size / 1024).toFixed(1)} kB packed, ${(listing.unpackedSize / 1024).toFixed(1)} kB unpacked: ${listing.files.map((f) => f.path).join(', ')}`,
      );
    }

    console.log('\n=== 1. ESM and CJS consumers');
    const app = join(work, 'app');
    mkdirSync(app);
    // npm runs no dependency's install script unless allowed: better-sqlite3 builds its binding.
    const manifest = { name: 'app', private: true, allowScripts: { 'better-sqlite3': true } };
    writeFileSync(join(app, 'package.json'), JSON.stringify(manifest, null, 2));
    const pkgs = Object.entries(tarballs).filter(([name]) => name !== '@ckpt/contract-tests');
    const install = ['install', '--no-audit', '--no-fund'];
    console.log(`drivers: ${DRIVERS.join(' ')}`);
    run('npm', [...install, ...pkgs.map(([, file]) => file), ...DRIVERS], app);
    writeFileSync(join(app, 'roundtrip.cjs'), ROUND_TRIP);
    writeFileSync(join(app, 'esm.mjs'), ESM);
    writeFileSync(join(app, 'cjs.cjs'), CJS);
    run('node', ['esm.mjs'], app);
    run('node', ['cjs.cjs'], app);
    // The published types, as an application with every strict option on compiles them.
    run(
      'npm',
      [
        ...install,
        'typescript@5.9',
        '@types/node@20',
        '@types/pg@8',
        '@types/better-sqlite3@7',
        // PGlite's declarations name Emscripten's globals without depending on their types.
        '@types/emscripten@1',
      ],
      app,
    );
    writeFileSync(join(app, 'strict.ts'), STRICT_TS);
    writeFileSync(join(app, 'tsconfig.json'), JSON.stringify(STRICT_TSCONFIG, null, 2));
    run('npx', ['tsc', '-p', '.'], app);
    // And as one whose TypeScript includes no types unless told (`types: []`, the default from
    // TypeScript 6): the declarations bring Node.js's types themselves.
    writeFileSync(join(app, 'no-types.ts'), NO_TYPES_TS);
    writeFileSync(join(app, 'tsconfig.no-types.json'), JSON.stringify(NO_TYPES_TSCONFIG, null, 2));
    run('npx', ['tsc', '-p', 'tsconfig.no-types.json'], app);
    // The command, as npm installed it, opening the adapter installed beside it. A command
    // opens only a store that is there, so the store is made first, as an application would.
    const missing = spawnSync('npx', ['ckpt', '--store', 'sqlite:./cli.db', 'sessions'], {
      cwd: app,
      encoding: 'utf8',
    });
    if (missing.status !== 3 || existsSync(join(app, 'cli.db'))) {
      throw new Error(`ckpt on a missing store: exit ${missing.status}, ${missing.stderr}`);
    }
    run('node', ['-e', MAKE_STORE], app);
    run('npx', ['ckpt', '--store', 'sqlite:./cli.db', 'state', 'smoke', 'set', 'k', '1'], app);
    run('npx', ['ckpt', '--store', 'sqlite:./cli.db', 'export', '--out', 'cli.jsonl'], app);
    run('npx', ['ckpt', '--store', 'sqlite:./cli.db', 'doctor'], app);
    // ckpt studio serves its page from the files in the tarball.
    writeFileSync(join(app, 'studio.mjs'), STUDIO);
    run('node', ['studio.mjs'], app);

    console.log('\n=== 2. examples/custom-adapter against the installed contract suite');
    const adapter = join(work, 'custom-adapter');
    for (const part of ['src', 'test', 'vitest.config.ts', 'README.md']) {
      cpSync(join(root, 'examples/custom-adapter', part), join(adapter, part), { recursive: true });
    }
    writeFileSync(
      join(adapter, 'package.json'),
      JSON.stringify({ name: 'ckpt-json-file-kv', private: true, type: 'module' }, null, 2),
    );
    run(
      'npm',
      [
        'install',
        '--no-audit',
        '--no-fund',
        tarballs['@ckpt/core'],
        tarballs['@ckpt/contract-tests'],
        ...TEST_TOOLS,
      ],
      adapter,
    );
    run('npx', ['vitest', 'run'], adapter);
    console.log('\nconsumer smoke test: passed');
  } finally {
    rmSync(work, { recursive: true, force: true });
  }
}

// A checkpoint round trip on every backend, shared by the ESM and the CJS consumer. It is
// CommonJS itself, and gets the packages from its caller, so that each consumer tests the
// copy (ESM or CJS) it loaded.
const ROUND_TRIP = `
const { mkdtempSync, rmSync } = require('node:fs');
const { tmpdir } = require('node:os');
const { join } = require('node:path');
const env = (name, url) => process.env[name] || url;
module.exports = async function roundTrip(kind, { core, adapter, sql, memory, sqlite, postgres, pglite, mysql, redis, langgraph, agents, aiSdk }) {
  // The adapter kit and the SQL family share core's modules: an error they make is core's class.
  if (!(adapter.invalidArgument('x', 'refused') instanceof core.CkptError) || typeof sql.SqlBackend !== 'function') {
    throw new Error(kind + ': @ckpt/core/adapter or @ckpt/core/sql is not the same copy of core');
  }
  console.log(kind + ': @ckpt/core/adapter and @ckpt/core/sql ok');
  // One namespace per kind, the same every run: nothing piles up in the test databases.
  const ns = 'consumer_smoke_' + kind;
  const dir = mkdtempSync(join(tmpdir(), 'ckpt-consumer-'));
  const file = join(dir, 'agent.db');
  const backends = {
    memory: () => memory.memory(),
    sqlite: () => sqlite.sqlite({ path: file }),
    postgres: () => postgres.postgres({ url: env('CKPT_TEST_POSTGRES_URL', 'postgres://postgres@127.0.0.1:5432/test'), namespace: ns }),
    pglite: () => pglite.pglite(),
    mysql: () => mysql.mysql({ url: env('CKPT_TEST_MYSQL_URL', 'mysql://root@127.0.0.1:3306/test'), namespace: ns }),
    redis: () => redis.redis({ url: env('CKPT_TEST_REDIS_URL', 'redis://127.0.0.1:6379'), namespace: ns }),
  };
  for (const [name, open] of Object.entries(backends)) {
    // What an earlier run, or a build of another version, left in the namespace goes first.
    await new core.CheckpointStore(open()).destroy();
    const store = new core.CheckpointStore(open());
    const id = 'smoke-' + Date.now();
    await store.checkpoint(id, { kind, name, steps: [1, 2, 3] }, { transcript: [{ role: 'user', text: 'hi' }] });
    const cp = await store.load(id);
    if (JSON.stringify(cp.data) !== JSON.stringify({ kind, name, steps: [1, 2, 3] })) {
      throw new Error(kind + ' ' + name + ': loaded ' + JSON.stringify(cp.data));
    }
    await store.destroy();
    console.log(kind + ': ' + name + ' round trip ok');
  }
  // The LangGraph saver, on the store of the same copy of core.
  const saver = new langgraph.CkptSaver(new core.CheckpointStore(memory.memory()));
  const checkpoint = { v: 4, id: 'c1', ts: new Date().toISOString(), channel_values: { a: [1] }, channel_versions: { a: 1 }, versions_seen: {} };
  const config = await saver.put({ configurable: { thread_id: 't' } }, checkpoint, { source: 'input', step: -1, parents: {} }, { a: 1 });
  const tuple = await saver.getTuple(config);
  if (JSON.stringify(tuple.checkpoint.channel_values) !== JSON.stringify({ a: [1] })) {
    throw new Error(kind + ': CkptSaver read back ' + JSON.stringify(tuple.checkpoint));
  }
  console.log(kind + ': @ckpt/langgraph put and getTuple ok');
  // The Agents SDK session, on the store of the same copy of core.
  const session = new agents.CkptSession(new core.CheckpointStore(memory.memory()), { sessionId: 'c' });
  await session.addItems([{ role: 'user', content: 'hi' }]);
  if ((await session.getItems(1))[0].content !== 'hi') throw new Error(kind + ': CkptSession read back wrong');
  console.log(kind + ': @ckpt/openai-agents addItems and getItems ok');
  // The AI SDK's chat store, on the store of the same copy of core (and the ai it requires).
  const chats = new aiSdk.CkptChatStore(new core.CheckpointStore(memory.memory()));
  await chats.save('chat', [{ id: 'm1', role: 'user', parts: [{ type: 'text', text: 'hi' }] }]);
  if ((await chats.load('chat'))[0].parts[0].text !== 'hi') throw new Error(kind + ': CkptChatStore read back wrong');
  console.log(kind + ': @ckpt/ai-sdk save and load ok');
  const viaUrl = await core.openStore('sqlite:' + file);
  await viaUrl.checkpoint('via-url', 1);
  await viaUrl.close();
  rmSync(dir, { recursive: true, force: true });
  console.log(kind + ': openStore("sqlite:…") ok');
};
`;

// Start the installed ckpt studio, open its address as a browser would (the token becomes a
// cookie), and read the page and its script.
const STUDIO = `
import { spawn } from 'node:child_process';
const child = spawn(process.execPath, ['node_modules/@ckpt/cli/dist/cli.js', '--store', 'sqlite:./cli.db', 'studio', '--port', '0'], { stdio: ['ignore', 'pipe', 'inherit'] });
try {
  const address = await new Promise((resolve, reject) => {
    let out = '';
    child.stdout.on('data', (chunk) => {
      out += chunk;
      const line = /^(http:\\/\\/\\S+)\\n/m.exec(out);
      if (line) resolve(line[1]);
    });
    child.once('exit', (code) => reject(new Error('ckpt studio exited with ' + code)));
  });
  const first = await fetch(address, { redirect: 'manual' });
  const cookie = first.headers.get('set-cookie').split(';')[0];
  const origin = new URL(address).origin;
  const page = await fetch(origin + '/', { headers: { cookie } });
  const html = await page.text();
  const script = /src="(\\/assets\\/[^"]+\\.js)"/.exec(html)?.[1];
  if (page.status !== 200 || !script) throw new Error('ckpt studio served no page: ' + page.status + ' ' + html);
  const js = await fetch(origin + script, { headers: { cookie } });
  if (js.status !== 200 || (await js.text()).length < 1000) throw new Error('ckpt studio served no script: ' + js.status);
  const sessions = await (await fetch(origin + '/api/sessions', { headers: { cookie } })).json();
  if (!Array.isArray(sessions.items)) throw new Error('ckpt studio API: ' + JSON.stringify(sessions));
  console.log('ckpt studio: page, script and API ok');
} finally {
  child.kill('SIGINT');
}
`;

const ESM = `
import { createRequire } from 'node:module';
import * as core from '@ckpt/core';
import * as adapter from '@ckpt/core/adapter';
import * as sql from '@ckpt/core/sql';
import * as memory from '@ckpt/memory';
import * as sqlite from '@ckpt/sqlite';
import * as postgres from '@ckpt/postgres';
import * as pglite from '@ckpt/pglite';
import * as mysql from '@ckpt/mysql';
import * as redis from '@ckpt/redis';
import * as langgraph from '@ckpt/langgraph';
import * as agents from '@ckpt/openai-agents';
import * as aiSdk from '@ckpt/ai-sdk';
const require = createRequire(import.meta.url);
await require('./roundtrip.cjs')('esm', { core, adapter, sql, memory, sqlite, postgres, pglite, mysql, redis, langgraph, agents, aiSdk });
// An error from the CJS copy of core is recognised by the ESM copy, and the other way round.
const cjsCore = require('@ckpt/core');
const fromCjs = new cjsCore.CkptError('CONFLICT', 'from the CJS copy');
if (!core.isCkptError(fromCjs, 'CONFLICT') || !cjsCore.isCkptError(new core.CkptError('CLOSED', 'x'), 'CLOSED')) {
  throw new Error('isCkptError does not work across the ESM and CJS copies');
}
console.log('esm: isCkptError across ESM and CJS copies ok');
`;

const STRICT_TSCONFIG = {
  compilerOptions: {
    strict: true,
    exactOptionalPropertyTypes: true,
    noUncheckedIndexedAccess: true,
    module: 'nodenext',
    moduleResolution: 'nodenext',
    target: 'es2022',
    noEmit: true,
    skipLibCheck: false,
    types: ['node', 'emscripten'],
  },
  files: ['strict.ts'],
};

const NO_TYPES_TSCONFIG = {
  compilerOptions: { ...STRICT_TSCONFIG.compilerOptions, types: [] },
  files: ['no-types.ts'],
};

const NO_TYPES_TS = `
import { CheckpointStore } from '@ckpt/core';
import { storedBytesOf } from '@ckpt/core/adapter';
import { SqlBackend } from '@ckpt/core/sql';
import { memory } from '@ckpt/memory';
import { sqlite } from '@ckpt/sqlite';
import { main } from '@ckpt/cli';
export const store = new CheckpointStore(memory());
export const bytes: Uint8Array = storedBytesOf('{}');
export { main, SqlBackend, sqlite };
`;

const STRICT_TS = `
import { type CheckpointBackend, CheckpointStore, kvBackend, type KvStore } from '@ckpt/core';
import { memory } from '@ckpt/memory';
import { mysql } from '@ckpt/mysql';
import { pglite } from '@ckpt/pglite';
import { postgres } from '@ckpt/postgres';
import { redis } from '@ckpt/redis';
import { sqlite } from '@ckpt/sqlite';

declare const kv: KvStore;
const backends: CheckpointBackend[] = [
  memory(),
  sqlite({ path: ':memory:' }),
  postgres({ url: 'postgres://127.0.0.1/test' }),
  pglite({ path: './pglite-data' }),
  mysql({ url: 'mysql://root@127.0.0.1/test' }),
  redis({ url: 'redis://127.0.0.1:6379' }),
  kvBackend(kv),
];
export const stores = backends.map((backend) => new CheckpointStore(backend));
`;

const CJS = `
const core = require('@ckpt/core');
require('./roundtrip.cjs')('cjs', {
  core,
  adapter: require('@ckpt/core/adapter'),
  sql: require('@ckpt/core/sql'),
  memory: require('@ckpt/memory'),
  sqlite: require('@ckpt/sqlite'),
  postgres: require('@ckpt/postgres'),
  pglite: require('@ckpt/pglite'),
  mysql: require('@ckpt/mysql'),
  redis: require('@ckpt/redis'),
  langgraph: require('@ckpt/langgraph'),
  agents: require('@ckpt/openai-agents'),
  aiSdk: require('@ckpt/ai-sdk'),
}).catch((err) => {
  console.error(err);
  process.exit(1);
});
`;

await main();
