/**
 * Files for the contract suite's SQLite harnesses: each in a folder of this test file's own,
 * removed after its last test, and each backend's file remembered, so that connect() opens
 * another connection to it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { CheckpointBackend } from '@ckpt/core';
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

/** Every capability: each SQLite harness has them all. */
export const ALL = { concurrentWriters: true, listSessions: true, listStateKeys: true };
