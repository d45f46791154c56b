import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runContractTests, runKvStoreTests } from '@ckpt/contract-tests';
import { type CheckpointBackend, kvBackend } from '@ckpt/core';
import { sqlite, sqliteKv } from '@ckpt/sqlite';
import { afterAll } from 'vitest';

const ALL = { concurrentWriters: true, listSessions: true, listStateKeys: true };
const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-contract-'));
let files = 0;
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** The file each backend was opened on, so connect() can open another connection to it. */
const fileOf = new WeakMap<CheckpointBackend, { path: string; namespace?: string }>();

// The writes on the writer thread (the default), and on the event loop.
for (const worker of [true, false]) {
  const open = (path: string, namespace?: string): CheckpointBackend => {
    const backend = sqlite({ path, namespace, worker });
    fileOf.set(backend, { path, namespace });
    return backend;
  };
  runContractTests({
    name: `sqlite (file, WAL, synchronous FULL, worker: ${worker})`,
    capabilities: ALL,
    create: () => open(join(dir, `native-${files++}.db`)),
    connect: (backend) => {
      const { path, namespace } = fileOf.get(backend)!;
      return open(path, namespace);
    },
    namespaced: (backend, namespace) => open(fileOf.get(backend)!.path, namespace),
  });
}

runContractTests({
  name: "sqlite (':memory:')",
  capabilities: ALL,
  create: () => sqlite({ path: ':memory:' }),
  modelRuns: 50,
});

runKvStoreTests({
  name: 'sqliteKv()',
  create: () => sqliteKv({ path: join(dir, `kv-${files++}.db`) }),
});

const kvFileOf = new WeakMap<CheckpointBackend, string>();
runContractTests({
  name: 'kvBackend(sqliteKv())',
  capabilities: ALL,
  create: () => {
    const path = join(dir, `kv-${files++}.db`);
    const backend = kvBackend(sqliteKv({ path }));
    kvFileOf.set(backend, path);
    return backend;
  },
  connect: (backend) => {
    const path = kvFileOf.get(backend)!;
    const other = kvBackend(sqliteKv({ path }));
    kvFileOf.set(other, path);
    return other;
  },
});
