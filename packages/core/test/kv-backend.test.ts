/** kvBackend's reads under a prune that runs between their reads of the KV store. */
import { describe, expect, it } from 'vitest';
import { CheckpointStore, isCkptError, type KvStore, kvBackend } from '../src/index.js';

/** A Map as a KvStore, whose next get of a body key waits until `release()`. */
function pausingKv() {
  const map = new Map<string, string>();
  let paused: { reached: () => void; until: Promise<void> } | null = null;
  let release = () => {};
  const kv: KvStore = {
    async get(key) {
      const gate = paused;
      if (gate && key.startsWith('ckpt:c:')) {
        paused = null;
        gate.reached();
        await gate.until;
      }
      return map.get(key);
    },
    async set(key, value) {
      map.set(key, value);
    },
    async delete(key) {
      return map.delete(key);
    },
    async compareAndSet(key, expected, value) {
      if ((map.get(key) ?? null) !== expected) return false;
      map.set(key, value);
      return true;
    },
  };
  /** Pause the next body read; resolves once a read is waiting there. */
  const pauseNextBodyRead = () =>
    new Promise<void>((reached) => {
      paused = { reached, until: new Promise<void>((go) => (release = go)) };
    });
  return { kv, pauseNextBodyRead, release: () => release() };
}

describe('kvBackend reads while a prune removes what they read', () => {
  // `read` gets the record (head 3); before it reads checkpoint 3, a new checkpoint moves the
  // head on and a prune removes 1 to 3. It must answer as of the new record, not with nothing.
  async function readWhileMovedOnAndPruned<T>(read: (store: CheckpointStore) => Promise<T>) {
    const { kv, pauseNextBodyRead, release } = pausingKv();
    const store = new CheckpointStore(kvBackend(kv));
    for (let i = 1; i <= 3; i++) await store.checkpoint('s', { step: i }, { transcript: [i] });
    const reached = pauseNextBodyRead();
    const reading = read(store);
    await reached;
    await store.checkpoint('s', { step: 4 }, { transcript: [4] });
    expect(await store.prune('s', { keepLast: 1 })).toBe(3);
    release();
    return reading;
  }

  it('load() of the head returns the new head, not null', async () => {
    const loaded = await readWhileMovedOnAndPruned((store) => store.load('s'));
    expect(loaded?.data).toEqual({ step: 4 });
  });

  it('history() and transcript() follow the new head, not a cut-off old one', async () => {
    expect(await readWhileMovedOnAndPruned((store) => store.history('s'))).toEqual([4]);
    const page = await readWhileMovedOnAndPruned((store) => store.transcript('s'));
    expect(page.items.map((e) => e.seq)).toEqual([4]);
  });

  it('list() lists what the new record names', async () => {
    const page = await readWhileMovedOnAndPruned((store) => store.list('s'));
    expect(page.items.map((c) => c.seq)).toEqual([4]);
  });
});

describe('kvBackend prune while a checkpoint with needs is appended', () => {
  it('starts over from the new record, and keeps what the new checkpoint needs', async () => {
    const { kv, pauseNextBodyRead, release } = pausingKv();
    const store = new CheckpointStore(kvBackend(kv));
    await store.checkpoint('s', 1);
    await store.checkpoint('s', 2);
    await store.checkpoint('s', 3, { needs: [2] });
    // The prune reads what the head (3) needs from its body; meanwhile 4 is written needing 1,
    // which the prune had decided to remove.
    const reached = pauseNextBodyRead();
    const pruning = store.prune('s', { keepLast: 1 });
    await reached;
    await store.checkpoint('s', 4, { needs: [1] });
    release();
    expect(await pruning).toBe(2);
    expect((await store.list('s')).items.map((c) => c.seq)).toEqual([4, 1]);
    expect((await store.load('s', 1))?.data).toBe(1);
  });

  it('keeps the record of a session without needs as it always was', async () => {
    const map = new Map<string, string>();
    const kv: KvStore = {
      get: async (key) => map.get(key),
      set: async (key, value) => void map.set(key, value),
      delete: async (key) => map.delete(key),
    };
    const store = new CheckpointStore(kvBackend(kv));
    for (let i = 1; i <= 3; i++) await store.checkpoint('s', i);
    await store.prune('s', { keepLast: 1 });
    expect(Object.keys(JSON.parse(map.get('ckpt:s:s')!))).not.toContain('needy');
    await store.checkpoint('s', 4, { needs: [3] });
    expect(JSON.parse(map.get('ckpt:s:s')!).needy).toEqual([[4, 4]]);
  });
});

describe('kvBackend(kv, options)', () => {
  const minimal = () => ({
    get: async () => undefined,
    set: async () => {},
    delete: async () => false,
  });

  function refusal(open: () => unknown) {
    try {
      open();
    } catch (err) {
      expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
      return err as Error & { details: { argument: string } };
    }
    throw new Error('expected INVALID_ARGUMENT');
  }

  it('takes a KvStore of get, set and delete alone', () => {
    expect(typeof kvBackend(minimal()).append).toBe('function');
  });

  it('refuses at once what is not a KvStore, naming what it lacks', () => {
    const cases: [unknown, string][] = [
      [null, 'get(), set() and delete()'],
      [{}, 'get(), set() and delete()'],
      [{ get: async () => undefined }, 'set() and delete()'],
      [{ ...minimal(), list: true }, 'list()'],
      [{ ...minimal(), compareAndSet: 'yes', close: 1 }, 'compareAndSet() and close()'],
    ];
    for (const [kv, lacks] of cases) {
      const err = refusal(() => kvBackend(kv as KvStore));
      expect(err.details.argument).toBe('kv');
      expect(err.message).toMatch(new RegExp(`which lacks ${lacks.replace(/[()]/g, '\\$&')}\\.$`));
    }
  });

  it('refuses one half of the versioned pair without the other, naming the one given', () => {
    const read = { ...minimal(), getWithVersion: async () => undefined };
    expect(refusal(() => kvBackend(read)).message).toMatch(
      /getWithVersion\(\) and setIfVersion\(\) together or not at all.*got getWithVersion\(\) alone\.$/,
    );
    const write = { ...minimal(), setIfVersion: async () => true };
    expect(refusal(() => kvBackend(write)).message).toMatch(/got setIfVersion\(\) alone\.$/);
  });

  it('refuses a prefix that is not a string, or options that are not an object', () => {
    expect(refusal(() => kvBackend(minimal(), { prefix: 5 as never })).details.argument).toBe(
      'prefix',
    );
    expect(refusal(() => kvBackend(minimal(), 'ckpt:' as never)).details.argument).toBe('options');
    expect(refusal(() => kvBackend(minimal(), { prefx: 'a:' } as never)).message).toBe(
      'kvBackend() options has no option "prefx"; the options are prefix and watchByPolling.',
    );
  });
});

describe('kvBackend over a list() that breaks its contract', () => {
  /** A Map as a KvStore whose list() answers with `answer` instead of what was asked. */
  function sloppyKv(answer: (sorted: string[], prefix: string, limit: number) => unknown): KvStore {
    const map = new Map<string, string>();
    return {
      get: async (key) => map.get(key),
      set: async (key, value) => {
        map.set(key, value);
      },
      delete: async (key) => map.delete(key),
      list: async (prefix, page) =>
        answer([...map.keys()].sort(), prefix, page?.limit ?? Infinity) as string[],
    };
  }

  const cases: [string, (sorted: string[], prefix: string, limit: number) => unknown, RegExp][] = [
    [
      'ignores after and limit',
      (sorted, prefix) => sorted.filter((k) => k.startsWith(prefix)),
      /answered 1500 keys when asked for at most 1001/,
    ],
    [
      'ignores after',
      (sorted, prefix, limit) => sorted.filter((k) => k.startsWith(prefix)).slice(0, limit),
      /each after options\.after/,
    ],
    [
      'ignores the prefix',
      (sorted, _prefix, limit) => sorted.slice(0, limit),
      /not a key with that prefix/,
    ],
    [
      'does not sort',
      (sorted, prefix, limit) =>
        sorted
          .filter((k) => k.startsWith(prefix))
          .reverse()
          .slice(0, limit),
      /ascending order/,
    ],
    ['answers no array', () => 'a,b', /must answer an array of keys/],
  ];

  for (const [what, answer, reason] of cases) {
    it(`refuses a store whose list() ${what} with BACKEND saying so, instead of paging forever or answering wrong`, async () => {
      const store = new CheckpointStore(kvBackend(sloppyKv(answer)));
      const scope = store.state('many');
      for (let i = 0; i < 1500; i++) await scope.set(`k${String(i).padStart(4, '0')}`, i);
      await store.checkpoint('s', 1); // keys outside the scope's prefix, sorting before it
      let refused: unknown;
      try {
        // Two pages hold every key; a store that ignores `after` would page on for ever.
        let cursor: string | null = null;
        for (let pages = 0; pages < 10; pages++) {
          cursor = (await scope.keys({ limit: 1000, cursor })).cursor;
          if (cursor === null) break;
        }
      } catch (err) {
        refused = err;
      }
      expect(isCkptError(refused, 'BACKEND')).toBe(true);
      expect((refused as Error).message).toMatch(reason);
    });
  }
});

describe('kvBackend over a get() that answers something else than text', () => {
  it('fails the call with BACKEND saying what get() must answer, instead of a JSON error', async () => {
    const map = new Map<string, unknown>();
    const decoding: KvStore = {
      // As a store that decodes JSON for its caller would answer.
      get: async (key) => (map.has(key) ? JSON.parse(map.get(key) as string) : undefined),
      set: async (key, value) => {
        map.set(key, value);
      },
      delete: async (key) => map.delete(key),
    };
    const store = new CheckpointStore(kvBackend(decoding));
    let refused: unknown;
    try {
      await store.checkpoint('s', 1);
      await store.load('s');
    } catch (err) {
      refused = err;
    }
    expect(isCkptError(refused, 'BACKEND')).toBe(true);
    expect((refused as Error).message).toMatch(
      /kv\.get\(\) must answer the string that set\(\) was given/,
    );
  });
});

describe('kvBackend over a getWithVersion() that answers something else than a value and its version', () => {
  it('fails the call with BACKEND saying what getWithVersion() must answer', async () => {
    const map = new Map<string, string>();
    const bare: KvStore = {
      get: async (key) => map.get(key),
      set: async (key, value) => void map.set(key, value),
      delete: async (key) => map.delete(key),
      // The value alone, as a store's plain get would answer it.
      getWithVersion: async (key) => map.get(key) as never,
      setIfVersion: async (key, value) => {
        map.set(key, value);
        return true;
      },
    };
    const store = new CheckpointStore(kvBackend(bare));
    await store.checkpoint('s', 1);
    let refused: unknown;
    try {
      await store.checkpoint('s', 2);
    } catch (err) {
      refused = err;
    }
    expect(isCkptError(refused, 'BACKEND')).toBe(true);
    expect((refused as Error).message).toMatch(
      /kv\.getWithVersion\(\) must answer \{ value, version \}/,
    );
  });
});
