/**
 * A KvStore on one JSON file: what a third party writes to put ckpt on a store of its own.
 * Every call reads the file, changes it and writes it back with no `await` in between, so
 * each call is atomic among the stores of one process: that is what makes compareAndSet
 * honest. Several processes on one file would need a file lock; this example stays in one.
 */
import { readFileSync, renameSync, writeFileSync } from 'node:fs';
import { setTimeout as sleep } from 'node:timers/promises';
import { compareCodePoints, type KvStore } from '@ckpt/core';

export interface JsonFileKvOptions {
  /** The file that holds every entry; created on the first write. */
  file: string;
  /** A delay before each call, to behave like a store across a network. Default 0. */
  latencyMs?: number;
}

export function jsonFileKv({ file, latencyMs = 0 }: JsonFileKvOptions): KvStore {
  // Entries are a Map written as [key, value] pairs: as object properties, a key such as
  // `__proto__` would not round-trip.
  const read = (): Map<string, string> => {
    try {
      return new Map(JSON.parse(readFileSync(file, 'utf8')) as [string, string][]);
    } catch (err) {
      if ((err as NodeJS.ErrnoException).code === 'ENOENT') return new Map();
      throw err;
    }
  };
  // Write a new file and rename it over the old one, so a crash never leaves half a file.
  const write = (entries: Map<string, string>) => {
    writeFileSync(`${file}.tmp`, JSON.stringify([...entries]));
    renameSync(`${file}.tmp`, file);
  };
  const call = async <T>(op: (entries: Map<string, string>) => T): Promise<T> => {
    if (latencyMs > 0) await sleep(latencyMs);
    return op(read());
  };

  return {
    get: (key) => call((entries) => entries.get(key)),
    set: (key, value) =>
      call((entries) => {
        write(entries.set(key, value));
      }),
    delete: (key) =>
      call((entries) => {
        const existed = entries.delete(key);
        if (existed) write(entries);
        return existed;
      }),
    compareAndSet: (key, expected, value) =>
      call((entries) => {
        if ((entries.get(key) ?? null) !== expected) return false;
        write(entries.set(key, value));
        return true;
      }),
    list: (prefix, { after, limit = Number.POSITIVE_INFINITY } = {}) =>
      call((entries) =>
        [...entries.keys()]
          .filter(
            (k) => k.startsWith(prefix) && (after === undefined || compareCodePoints(k, after) > 0),
          )
          .sort(compareCodePoints)
          .slice(0, limit),
      ),
  };
}
