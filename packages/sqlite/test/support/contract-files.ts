/**
 * Files for the contract suite's SQLite harnesses: each in a folder of this test file's own,
 * removed after its last test, and each backend's file remembered, so that connect() opens
 * another connection to it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { ContractHarness } from '@ckpt/contract-tests';
import type { CheckpointBackend } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
import { afterAll } from 'vitest';

/** Where a backend was opened: its file, and its namespace. */
export interface Opened {
  path: string;
  namespace?: string;
}

/**
 * `open`, remembering where each backend it opens is: `fresh()` names a new file, `where(b)`
 * says where `b` was opened.
 */
export function contractFiles(prefix: string) {
  const dir = mkdtempSync(join(tmpdir(), `ckpt-sqlite-${prefix}-`));
  let files = 0;
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  const places = new WeakMap<CheckpointBackend, Opened>();
  return {
    fresh: (name: string) => join(dir, `${name}-${files++}.db`),
    opened<B extends CheckpointBackend>(backend: B, at: Opened): B {
      places.set(backend, at);
      return backend;
    },
    where: (backend: CheckpointBackend) => places.get(backend)!,
  };
}

/** What kvBackend(sqliteKv()) can do: everything but a change log, which the KV contract has not. */
export const ALL = {
  concurrentWriters: true,
  listSessions: true,
  listStateKeys: true,
  watch: false,
  tags: true,
};
/** What the native backend can do: everything. */
export const NATIVE = { ...ALL, watch: true, tags: true };

/** The harness of SQLite files, their writes committed on the writer thread or not. */
export function fileHarness(worker: boolean): ContractHarness {
  const files = contractFiles(worker ? 'worker' : 'event-loop');
  const open = (path: string, namespace?: string) =>
    files.opened(sqlite({ path, namespace, worker }), { path, namespace });
  return {
    name: `sqlite (file, WAL, synchronous FULL, worker: ${worker})`,
    capabilities: NATIVE,
    create: () => open(files.fresh('native')),
    connect: (backend) => open(files.where(backend).path, files.where(backend).namespace),
    namespaced: (backend, namespace) => open(files.where(backend).path, namespace),
  };
}
