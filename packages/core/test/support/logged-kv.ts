/**
 * The reference KvStore with a log of its writes (`changes` and `onChanges`), in memory: each
 * write and its entry in the log are made in one synchronous step, as a store's own log (etcd's
 * revisions, a trigger in the write's transaction) makes them, so that no write is ever
 * missing from the log. It keeps the latest `kept` writes; a reader further behind is told
 * 'expired'.
 */
import { logPosition } from '../../src/adapter.js';
import { type CheckpointBackend, compareCodePoints, type KvStore } from '../../src/index.js';

/** One write, as the log keeps it. */
interface Write {
  key: string;
  value: string | null;
  position: string;
}

export function loggedKv({ kept = 10_000 }: { kept?: number } = {}) {
  const values = new Map<string, string>();
  /** The writes kept, oldest first; the first is numbered `first`. */
  let log: Write[] = [];
  let first = 1;
  const wakes = new Set<() => void>();
  const end = () => first + log.length - 1;

  /** Write (null: delete) and log it, in one step. */
  const write = (key: string, value: string | null) => {
    if (value === null) values.delete(key);
    else values.set(key, value);
    log.push({ key, value, position: logPosition(end() + 1) });
    if (log.length > kept) {
      first += log.length - kept;
      log = log.slice(log.length - kept);
    }
    for (const wake of wakes) queueMicrotask(wake);
  };

  const kv: KvStore = {
    async get(key) {
      return values.get(key);
    },
    async set(key, value) {
      write(key, value);
    },
    async delete(key) {
      if (!values.has(key)) return false;
      write(key, null);
      return true;
    },
    async compareAndSet(key, expected, value) {
      if ((values.get(key) ?? null) !== expected) return false;
      write(key, value);
      return true;
    },
    async list(prefix, { after, limit = Number.POSITIVE_INFINITY } = {}) {
      return [...values.keys()]
        .filter(
          (k) => k.startsWith(prefix) && (after === undefined || compareCodePoints(k, after) > 0),
        )
        .sort(compareCodePoints)
        .slice(0, limit);
    },
    async changes({ after, limit }) {
      if (after === null) return { changes: [], position: logPosition(end()) };
      if (!/^\d{20}$/.test(after)) return 'unknown';
      const from = Number(after);
      if (from > end()) return 'unknown';
      if (from < first - 1) return 'expired';
      const changes = log.slice(from - first + 1, from - first + 1 + limit);
      return { changes, position: changes.at(-1)?.position ?? after };
    },
    async onChanges(wake) {
      wakes.add(wake);
      return async () => {
        wakes.delete(wake);
      };
    },
  };
  return { kv, values, log: () => log };
}

/** Where `backend`'s change log ends now: a watcher's first read. */
export async function logEnd(backend: CheckpointBackend): Promise<string> {
  const end = await backend.changes!({ after: null, limit: 0 });
  if (end === 'expired') throw new Error('a change log answered expired to a read of its end');
  return end.position;
}
