/**
 * Upgrade fixtures: SQLite stores that an earlier build of an integration wrote (`<name>.db`),
 * each beside what the framework read from it then (`<name>.json`), and the places a test reads
 * one with today's build: its own file, upgraded in place, and a copy on every backend.
 */
import { copyFileSync, mkdtempSync, readdirSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, copyStore } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
import { emptyStore, STORES } from './index.js';

/**
 * The fixtures in `dir`, by name: one for each `<name>.json`, so that a fixture whose store is
 * missing fails rather than goes unread.
 */
export function fixtureNames(dir: string): string[] {
  return readdirSync(dir)
    .filter((file) => file.endsWith('.json'))
    .map((file) => file.slice(0, -'.json'.length))
    .sort();
}

/** What the framework read of fixture `name` in `dir` when it was written. */
export function fixtureReads<T>(dir: string, name: string): T {
  return JSON.parse(readFileSync(join(dir, `${name}.json`), 'utf8')) as T;
}

/** A place a test reads a fixture store: each `open()` gives a fresh one. */
export interface FixtureTarget {
  name: string;
  open(): Promise<CheckpointStore>;
}

let opened = 0;

/**
 * Where fixture `name` of `dir` is read: a copy of its file opened with today's build (which
 * upgrades it), and copied from there (`copyStore`) to every backend of STORES. A server's
 * namespace (`namespace`) costs its migrations, so each open empties one, of its sessions and
 * the state `scopes`; an in-process backend gets a new namespace each time. `closeAll()`
 * closes what was opened.
 */
export function fixtureTargets(
  dir: string,
  name: string,
  options: { namespace: string; scopes: string[] },
): { targets: FixtureTarget[]; closeAll(): Promise<void> } {
  // Made at the first open, so that a run that skips every case leaves nothing behind.
  let work: string | undefined;
  const workDir = () => (work ??= mkdtempSync(join(tmpdir(), `ckpt-${options.namespace}-`)));
  const stores: CheckpointStore[] = [];
  const handles: { close(): Promise<void> }[] = [];
  const copyOfFile = () => {
    const path = join(workDir(), `${name}-${opened++}.db`);
    copyFileSync(join(dir, `${name}.db`), path);
    return new CheckpointStore(sqlite({ path }));
  };
  const targets = [
    {
      name: 'its own file, upgraded in place',
      async open() {
        const store = copyOfFile();
        stores.push(store);
        return store;
      },
    },
    ...STORES.map((backend) => ({
      name: `copied to ${backend.name}`,
      async open() {
        const namespace = backend.server ? options.namespace : `${options.namespace}_${opened++}`;
        const handle = await backend.open(namespace, workDir());
        handles.push(handle);
        if (backend.server) await emptyStore(handle.store, options.scopes);
        const source = copyOfFile();
        try {
          await copyStore(source, handle.store);
        } finally {
          await source.close();
        }
        return handle.store;
      },
    })),
  ];
  return {
    targets,
    async closeAll() {
      for (const store of stores.splice(0)) await store.close();
      for (const handle of handles.splice(0)) await handle.close();
      if (work !== undefined) rmSync(work, { recursive: true, force: true });
    },
  };
}
