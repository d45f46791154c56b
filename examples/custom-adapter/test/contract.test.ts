// The contract suite against the JSON file store, exactly as @ckpt/contract-tests' README
// tells an adapter's author to run it.
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runContractTests, runKvStoreTests } from '@ckpt/contract-tests';
import { kvBackend } from '@ckpt/core';
import { afterAll } from 'vitest';
import { jsonFileKv } from '../src/index.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-json-file-kv-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const files = new WeakMap<object, string>();
const open = (file: string) => {
  const backend = kvBackend(jsonFileKv({ file }));
  files.set(backend, file);
  return backend;
};

// The store method by method, then the whole suite through kvBackend.
runKvStoreTests({
  name: 'json-file-kv',
  create: () => jsonFileKv({ file: join(dir, `${crypto.randomUUID()}.json`) }),
});

runContractTests({
  name: 'kvBackend(json-file-kv)',
  capabilities: {
    concurrentWriters: true,
    listSessions: true,
    listStateKeys: true,
    watch: false,
    tags: true,
  },
  create: () => open(join(dir, `${crypto.randomUUID()}.json`)),
  // Another "connection": a second store on the same file.
  connect: (backend) => open(files.get(backend)!),
  modelRuns: 50,
});
