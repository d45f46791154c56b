/**
 * A KvStore on one file: what a third party writes to put ckpt on a store of its own. The
 * entries live in memory, and each change is appended to the file as a JSON line (`[key,
 * value]`, or `[key]` for a delete) before its call returns, so that a new process reads them
 * back; the file is rewritten whole once most of its lines are stale. Every call does its work
 * with no `await` in between, so each is atomic among the stores of one process, which share a
 * file's entries: that is what makes compareAndSet honest. Several processes on one file would
 * need a file lock; this example stays in one.
 */
import { appendFileSync, readFileSync, renameSync, writeFileSync } from 'node:fs';
import { resolve } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { compareCodePoints, type KvStore } from '@ckpt/core';

export interface JsonFileKvOptions {
  /** The file that holds every entry; created on the first write. */
  file: string;
  /** A delay before each call, to behave like a store across a network. Default 0. */
  latencyMs?: number;
}

/** A file's entries, as its lines make them, and how many lines it holds. */
interface Journal {
  file: string;
  // A Map: as object properties, a key such as `__proto__` would not round-trip.
  entries: Map<string, string>;
  lines: number;
}

/** The journals of the files open in this process, so that every store on a file shares one. */
const journals = new Map<string, Journal>();

/** The file's lines, read once; a last line cut short by a crash is dropped. */
function open(file: string): Journal {
  const path = resolve(file);
  let journal = journals.get(path);
  if (journal !== undefined) return journal;
  let text = '';
  try {
    text = readFileSync(path, 'utf8');
  } catch (err) {
    if ((err as NodeJS.ErrnoException).code !== 'ENOENT') throw err;
  }
  journal = { file: path, entries: new Map(), lines: 0 };
  let whole = true;
  for (const line of text.split('\n')) {
    if (line === '') continue;
    let change: [string, string?];
    try {
      change = JSON.parse(line);
    } catch {
      whole = false;
      break;
    }
    apply(journal, change);
  }
  // The next line must not be appended to one cut short.
  if (!whole) rewrite(journal);
  journals.set(path, journal);
  return journal;
}

function apply(journal: Journal, [key, value]: [string, string?]): void {
  if (value === undefined) journal.entries.delete(key);
  else journal.entries.set(key, value);
  journal.lines++;
}

/** Append a change to the file (and rewrite it once most of its lines are stale). */
function record(journal: Journal, change: [string, string?]): void {
  appendFileSync(journal.file, `${JSON.stringify(change)}\n`);
  apply(journal, change);
  if (journal.lines > 1000 && journal.lines > 2 * journal.entries.size) rewrite(journal);
}

/** Write the entries to a new file and rename it over the old one, so a crash never leaves half. */
function rewrite(journal: Journal): void {
  const lines = [...journal.entries].map((entry) => `${JSON.stringify(entry)}\n`);
  writeFileSync(`${journal.file}.tmp`, lines.join(''));
  renameSync(`${journal.file}.tmp`, journal.file);
  journal.lines = lines.length;
}

export function jsonFileKv({ file, latencyMs = 0 }: JsonFileKvOptions): KvStore {
  const call = async <T>(op: (journal: Journal) => T): Promise<T> => {
    if (latencyMs > 0) await sleep(latencyMs);
    return op(open(file));
  };

  return {
    get: (key) => call(({ entries }) => entries.get(key)),
    set: (key, value) => call((journal) => record(journal, [key, value])),
    delete: (key) =>
      call((journal) => {
        const existed = journal.entries.has(key);
        if (existed) record(journal, [key]);
        return existed;
      }),
    compareAndSet: (key, expected, value) =>
      call((journal) => {
        if ((journal.entries.get(key) ?? null) !== expected) return false;
        record(journal, [key, value]);
        return true;
      }),
    list: (prefix, { after, limit = Number.POSITIVE_INFINITY } = {}) =>
      call(({ entries }) =>
        [...entries.keys()]
          .filter(
            (k) => k.startsWith(prefix) && (after === undefined || compareCodePoints(k, after) > 0),
          )
          .sort(compareCodePoints)
          .slice(0, limit),
      ),
  };
}
