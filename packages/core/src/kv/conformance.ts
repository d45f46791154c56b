/**
 * What `kvBackend` accepts as a `KvStore`, and the store as the rest of the KV backend reads
 * it: checked for its methods when it is given, and for what it answers on every call, so
 * that a store that breaks the contract fails with a message saying how, not later and
 * somewhere else.
 */

import { compareCodePoints } from '../adapter/order.js';
import { invalidArgument } from '../values/errors.js';
import { describe, methodList, missingMethods } from '../values/validate.js';
import type { KvChangesPage, KvStore } from './kv-store.js';

const REQUIRED = ['get', 'set', 'delete'] as const;
const OPTIONAL = [
  'compareAndSet',
  'getWithVersion',
  'setIfVersion',
  'list',
  'changes',
  'onChanges',
  'close',
  'errorHint',
] as const;

/**
 * `given`, refused unless it has the required methods (and functions for the optional ones it
 * names), as the KV backend reads it. A store written to other conventions works as well: a
 * missing key answered with null (as Redis clients and localStorage answer) reads as
 * undefined, and delete() or compareAndSet() answered with 1 or 0 read as true or false.
 */
export function conformingKv(given: unknown): KvStore {
  const missing = missingMethods(given, REQUIRED);
  const broken = OPTIONAL.filter(
    (m) =>
      (given as Record<string, unknown> | null)?.[m] !== undefined &&
      missingMethods(given, [m]).length > 0,
  );
  if (missing.length > 0 || broken.length > 0) {
    throw invalidArgument(
      'kv',
      `kvBackend(kv) needs a KvStore: get(), set() and delete(), and optionally compareAndSet() or the pair getWithVersion() and setIfVersion(), list(), changes() (with onChanges() if it can wake watchers), close() and errorHint(); got ${describe(given)}, which lacks ${methodList([...missing, ...broken])}.`,
    );
  }
  const kv = given as KvStore;
  const {
    compareAndSet,
    getWithVersion,
    setIfVersion,
    list,
    changes,
    onChanges,
    close,
    errorHint,
  } = kv;
  if ((getWithVersion === undefined) !== (setIfVersion === undefined)) {
    throw invalidArgument(
      'kv',
      `kvBackend(kv) takes getWithVersion() and setIfVersion() together or not at all: a version read is of use only to a write conditional on it; got ${getWithVersion ? 'getWithVersion()' : 'setIfVersion()'} alone.`,
    );
  }
  if (onChanges !== undefined && changes === undefined) {
    throw invalidArgument(
      'kv',
      'kvBackend(kv) takes onChanges() only with changes(): a wake tells watchers to read the log of writes that changes() answers; got onChanges() alone.',
    );
  }
  const pollMs = checkedPollMs(kv.changesPollMs, changes !== undefined);
  return {
    get: async (key) => storedText(await kv.get(key)),
    set: (key, value) => kv.set(key, value),
    delete: async (key) => Boolean(await kv.delete(key)),
    ...(compareAndSet && {
      compareAndSet: async (key, expected, value) =>
        Boolean(await compareAndSet.call(kv, key, expected, value)),
    }),
    ...(getWithVersion &&
      setIfVersion && {
        getWithVersion: async (key) => storedCell(await getWithVersion.call(kv, key)),
        setIfVersion: async (key, value, version) =>
          Boolean(await setIfVersion.call(kv, key, value, version)),
      }),
    ...(list && {
      list: async (prefix, page) => checkedKeys(await list.call(kv, prefix, page), prefix, page),
    }),
    ...(changes && {
      changes: async (query) => checkedChanges(await changes.call(kv, query), query),
    }),
    ...(onChanges && { onChanges: (wake) => onChanges.call(kv, wake) }),
    ...(pollMs !== undefined && { changesPollMs: pollMs }),
    ...(close && { close: () => close.call(kv) }),
    ...(errorHint && { errorHint: (err) => errorHint.call(kv, err) }),
  };
}

/** What `get()` answered, as text or undefined; anything else would fail later as bad JSON. */
function storedText(value: unknown): string | undefined {
  if (typeof value === 'string') return value;
  if (value === undefined || value === null) return undefined;
  throw new Error(
    `kv.get() must answer the string that set() was given, or undefined; it answered ${describe(value)} (a store that decodes JSON itself must be given strings to keep as they are)`,
  );
}

/** What `getWithVersion()` answered, as a value with its version or undefined. */
function storedCell(answer: unknown): { value: string; version: unknown } | undefined {
  if (answer === undefined || answer === null) return undefined;
  const { value, version } = answer as { value?: unknown; version?: unknown };
  if (typeof value !== 'string' || version === undefined || version === null) {
    throw new Error(
      `kv.getWithVersion() must answer { value, version } with the string that set() was given and the version setIfVersion() compares, or undefined; it answered ${describe(answer)}`,
    );
  }
  return { value, version };
}

/**
 * The keys `list()` answered, refused when they break its contract: a store that ignored
 * `after` would make the listings built on it page forever, and one that did not sort or
 * filter them would make them wrong without a word.
 */
function checkedKeys(
  keys: unknown,
  prefix: string,
  page: { after?: string; limit?: number } = {},
): string[] {
  if (!Array.isArray(keys)) {
    throw new Error(`kv.list() must answer an array of keys; it answered ${describe(keys)}`);
  }
  if (page.limit !== undefined && keys.length > page.limit) {
    throw new Error(`kv.list() answered ${keys.length} keys when asked for at most ${page.limit}`);
  }
  let previous = page.after;
  for (const key of keys) {
    if (typeof key !== 'string' || !key.startsWith(prefix)) {
      throw new Error(
        `kv.list(${JSON.stringify(prefix)}) answered ${describe(key)}, which is not a key with that prefix`,
      );
    }
    if (previous !== undefined && compareCodePoints(key, previous) <= 0) {
      throw new Error(
        `kv.list() must answer keys in ascending order (by UTF-8 bytes), each after options.after; it answered ${JSON.stringify(key)} after ${JSON.stringify(previous)}`,
      );
    }
    previous = key;
  }
  return keys;
}

/** The store's `changesPollMs`, refused unless it is a positive number given with changes(). */
function checkedPollMs(given: unknown, hasChanges: boolean): number | undefined {
  if (given === undefined) return undefined;
  if (!hasChanges || typeof given !== 'number' || !(given > 0) || !Number.isFinite(given)) {
    throw invalidArgument(
      'kv',
      `kvBackend(kv): kv.changesPollMs must be a positive number of milliseconds, given with changes(), the log it says how often to read; got ${describe(given)}${hasChanges ? '' : ' without changes()'}.`,
    );
  }
  return given;
}

/**
 * What `changes()` answered, refused when it breaks its contract: a log that answered writes
 * out of order, or at or before `after`, would make watchers give changes twice or skip them,
 * and one that ignored `limit` would make them read without end.
 */
function checkedChanges(
  answer: unknown,
  query: { after: string | null; limit: number },
): KvChangesPage | 'expired' | 'unknown' {
  const { after, limit } = query;
  if (answer === 'expired' || answer === 'unknown') {
    if (after !== null) return answer;
    throw new Error(
      `kv.changes() must answer the log's end to a read with after null; it answered ${JSON.stringify(answer)}`,
    );
  }
  const page = answer as Partial<KvChangesPage> | null;
  if (
    typeof page !== 'object' ||
    page === null ||
    !Array.isArray(page.changes) ||
    typeof page.position !== 'string'
  ) {
    throw new Error(
      `kv.changes() must answer { changes, position }, 'expired' or 'unknown'; it answered ${describe(answer)}`,
    );
  }
  const allowed = after === null ? 0 : limit;
  if (page.changes.length > allowed) {
    throw new Error(
      `kv.changes() answered ${page.changes.length} writes when asked for at most ${allowed}${after === null ? ' (none after null: only the position of its end)' : ''}`,
    );
  }
  let previous = after;
  for (const change of page.changes as unknown[]) {
    const { key, value, position } = (change ?? {}) as Record<string, unknown>;
    if (
      typeof key !== 'string' ||
      (typeof value !== 'string' && value !== null) ||
      typeof position !== 'string'
    ) {
      throw new Error(
        `kv.changes() must answer writes as { key, value, position } (value a string, or null for a delete); it answered ${describe(change)}`,
      );
    }
    if (previous !== null && position <= previous) {
      throw new Error(
        `kv.changes() must answer writes in the order of its log, each after the position asked for, positions sorting as strings; it answered ${JSON.stringify(position)} after ${JSON.stringify(previous)}`,
      );
    }
    previous = position;
  }
  if (previous !== null && page.position < previous) {
    throw new Error(
      `kv.changes() must answer a page's position at or after its last write's; it answered ${JSON.stringify(page.position)} after ${JSON.stringify(previous)}`,
    );
  }
  return page as KvChangesPage;
}
