/**
 * kvBackend's tag index beyond the contract suite: the order its keys give, what a write of a
 * tagged session costs, the KV contract's key rules, and writes that meet each other, stop
 * half-way, or leave entries behind.
 */
import { allPages } from '@ckpt/contract-tests';
import { memoryKv } from '@ckpt/memory';
import { afterEach, describe, expect, it, vi } from 'vitest';
import { compareSessionsNewestFirst } from '../src/adapter.js';
import {
  type CheckpointBackend,
  CheckpointStore,
  compareCodePoints,
  isCkptError,
  type KvStore,
  kvBackend,
} from '../src/index.js';
import { newestFirst, pastNewestFirst, readNewestFirst } from '../src/kv/newest-first.js';
import { failingAt } from './support/failing-kv.js';
import { logEnd, loggedKv } from './support/logged-kv.js';
import { versionedKv } from './support/versioned-kv.js';

/** The ids `where` lists, `limit` a page. */
async function listed(store: CheckpointStore, where: Record<string, string>, limit = 2) {
  const found = await allPages((page) => store.sessions({ ...page, where }), limit);
  return found.map((s) => s.sessionId);
}

/** What `where` should list: the whole catalog, read and filtered. */
async function expected(store: CheckpointStore, where: Record<string, string>) {
  const all = await allPages((page) => store.sessions(page), 100);
  return all
    .filter((s) => Object.entries(where).every(([key, value]) => s.tags[key] === value))
    .map((s) => s.sessionId);
}

/** Session `sessionId` to import, of one checkpoint, with `tags`. */
function imported(sessionId: string, tags: Record<string, string>) {
  const at = new Date(2_000);
  return {
    sessionId,
    head: 1,
    forkedFrom: null,
    createdAt: at,
    updatedAt: at,
    checkpoints: [{ seq: 1, parent: null, data: 1, metadata: {}, transcript: [], createdAt: at }],
    tags,
  };
}

/** The keys of the tag index a map of a KV holds. */
const entries = (values: Map<string, unknown>) =>
  [...values.keys()].filter((key) => key.startsWith('ckpt:t:')).sort();

afterEach(() => {
  vi.restoreAllMocks();
});

describe('kvBackend tag index keys', () => {
  const times = [0, 1, 2, 1_700_000_000_000, Number.MAX_SAFE_INTEGER];
  const ids = [
    'a',
    'ab',
    'b',
    'a b',
    'a:b',
    '%3A',
    'é',
    'e\u0301',
    '\u0001',
    '\uFFFF',
    '\u{1F99C}',
    '\u{10FFFF}',
    'a\u{10FFFF}',
  ];
  const positions = times.flatMap((updatedAt) =>
    ids.map((sessionId) => ({ updatedAt, sessionId })),
  );

  it('sort as the catalog does (updatedAt, then id, both descending), whatever follows them', () => {
    const keyOf = (p: (typeof positions)[number], i: number) =>
      newestFirst(p.updatedAt, p.sessionId) + (i % 2 === 0 ? '0123456789ab' : 'fedcba987654');
    const byKey = positions
      .map((p, i) => ({ p, key: keyOf(p, i) }))
      .sort((a, b) => compareCodePoints(a.key, b.key))
      .map(({ p }) => p);
    expect(byKey).toEqual([...positions].sort(compareSessionsNewestFirst));
  });

  it('read back as the position they were written from', () => {
    for (const p of positions) {
      expect(readNewestFirst(`${newestFirst(p.updatedAt, p.sessionId)}token`)).toEqual({
        position: p,
        rest: 'token',
      });
    }
    expect(readNewestFirst('not a position')).toBeNull();
  });

  it('resume past a position: above its own keys, below those of every position after it', () => {
    const sorted = [...positions].sort(compareSessionsNewestFirst);
    for (const [i, p] of sorted.entries()) {
      const past = pastNewestFirst(p)!;
      const own = `${newestFirst(p.updatedAt, p.sessionId)}fff`;
      expect(compareCodePoints(past, own)).toBeGreaterThan(0);
      for (const later of sorted.slice(i + 1)) {
        const theirs = newestFirst(later.updatedAt, later.sessionId);
        expect(compareCodePoints(past, theirs)).toBeLessThan(0);
      }
    }
    expect(pastNewestFirst({ updatedAt: -1, sessionId: 'a' })).toBeNull();
  });

  it('stay within the KV contract: at most 2,056 bytes past the prefix, for the largest tags and id', async () => {
    const kv = memoryKv();
    const written: string[] = [];
    const store = new CheckpointStore(
      kvBackend({
        ...kv,
        set: (key, value) => {
          written.push(key);
          return kv.set(key, value);
        },
        compareAndSet: (key, expected, value) => {
          written.push(key);
          return kv.compareAndSet!(key, expected, value);
        },
      }),
    );
    // Escaping makes each `:` and `%` three bytes; each code point of an id is four.
    const tags = Object.fromEntries(
      Array.from({ length: 16 }, (_, i) => [
        `${':'.repeat(62)}${String(i).padStart(2, '0')}`,
        i % 2 === 0 ? ':'.repeat(256) : '%'.repeat(256),
      ]),
    );
    const id = ':'.repeat(255);
    await store.checkpoint(id, 1, { tags });
    const longest = Math.max(
      ...written.filter((k) => k.startsWith('ckpt:t:')).map((k) => Buffer.byteLength(k) - 5),
    );
    expect(longest).toBeGreaterThan(1000);
    expect(longest).toBeLessThanOrEqual(2056);
    expect(await listed(store, { [Object.keys(tags)[5]!]: '%'.repeat(256) })).toEqual([id]);
  });
});

describe('kvBackend tag index writes', () => {
  /** A versioned KV that notes the method and key of each call. */
  function notedKv() {
    const made = versionedKv();
    const calls: string[] = [];
    const kv = Object.fromEntries(
      Object.entries(made.kv).map(([name, method]) => [
        name,
        (key: string, ...rest: unknown[]) => {
          calls.push(`${name} ${key.slice(5, 7)}`);
          return (method as (...args: unknown[]) => unknown)(key, ...rest);
        },
      ]),
    ) as unknown as KvStore;
    return { kv, values: made.values, noted: () => calls.splice(0) };
  }

  it('a checkpoint on a tagged session writes its entries before the body, and removes the old ones after the record', async () => {
    const { kv, noted } = notedKv();
    const store = new CheckpointStore(kvBackend(kv));
    await store.checkpoint('s', 1, { tags: { user: 'ann', status: 'open' } });
    noted();
    await store.checkpoint('s', 2);
    expect(noted()).toEqual([
      'getWithVersion s:',
      'set t:',
      'set t:',
      'setIfVersion c:',
      'setIfVersion s:',
      'delete t:',
      'delete t:',
    ]);
  });

  it('setTags and rollback write the new entries, swap the record, and remove the old ones', async () => {
    const { kv, noted, values } = notedKv();
    const store = new CheckpointStore(kvBackend(kv));
    await store.checkpoint('s', 1, { tags: { user: 'ann' } });
    await store.checkpoint('s', 2);
    noted();
    await store.setTags('s', { user: 'bob', status: 'open' });
    expect(noted()).toEqual([
      'getWithVersion s:',
      'set t:',
      'set t:',
      'setIfVersion s:',
      'delete t:',
    ]);
    await store.rollback('s', 1);
    expect(noted()).toEqual([
      'getWithVersion s:',
      'get c:',
      'set t:',
      'set t:',
      'setIfVersion s:',
      'delete t:',
      'delete t:',
    ]);
    // One entry a tag, no more.
    expect(entries(values)).toHaveLength(2);
    // The same tags again: nothing to write.
    await store.setTags('s', { status: 'open', user: 'bob' });
    expect(noted()).toEqual(['getWithVersion s:']);
  });

  it('an untagged session writes no entry, and its record holds nothing of tags', async () => {
    const { kv, noted, values } = notedKv();
    const store = new CheckpointStore(kvBackend(kv));
    await store.checkpoint('s', 1);
    await store.checkpoint('s', 2);
    await store.rollback('s', 1);
    expect(noted().filter((call) => call.endsWith('t:'))).toEqual([]);
    const record = JSON.parse(values.get('ckpt:s:s')!.value);
    expect(Object.keys(record)).not.toContain('tags');
    expect(Object.keys(record)).not.toContain('tagged');
    await store.setTags('s', { user: 'ann' });
    await store.setTags('s', {});
    expect(entries(values)).toEqual([]);
    expect(Object.keys(JSON.parse(values.get('ckpt:s:s')!.value))).not.toContain('tags');
  });

  it('delete, a sweep and an import in place of a session remove its entries', async () => {
    const { kv, values } = notedKv();
    const store = new CheckpointStore(kvBackend(kv));
    for (const id of ['a', 'b', 'c']) await store.checkpoint(id, 1, { tags: { user: id } });
    await store.delete('a');
    await store.importSession(imported('b', { user: 'x' }), { ifExists: 'replace' });
    await new Promise((resolve) => setTimeout(resolve, 5));
    expect(await store.sweep({ idleFor: 0 })).toMatchObject({ sessions: 2 });
    expect(entries(values)).toEqual([]);
  });
});

describe('kvBackend tag index under writes that meet', () => {
  it('lists a session whose record swap is in flight once, at its old place, then at its new one', async () => {
    let now = 1_700_000_000_000;
    vi.spyOn(Date, 'now').mockImplementation(() => now++);
    const { kv, holdNext } = versionedKv();
    const store = new CheckpointStore(kvBackend(kv));
    for (const id of ['a', 'b']) await store.checkpoint(id, 1, { tags: { k: 'v' } });
    expect(await listed(store, { k: 'v' })).toEqual(['b', 'a']);
    const held = holdNext((method, key) => method === 'setIfVersion' && key === 'ckpt:s:a');
    const writing = store.checkpoint('a', 2);
    const release = await held;
    // The new entry is written; the record still names the old one.
    expect(await listed(store, { k: 'v' }, 1)).toEqual(['b', 'a']);
    release();
    await writing;
    expect(await listed(store, { k: 'v' }, 1)).toEqual(['a', 'b']);
  });

  it('loses no entry when a write removes the old entries after a later write made the same tags again', async () => {
    const { kv, holdNext } = versionedKv();
    const store = new CheckpointStore(kvBackend(kv));
    await store.checkpoint('s', 1, { tags: { user: 'ann' } });
    // The first setTags swaps the record, and waits before it removes the entry of user=ann.
    const held = holdNext((method, key) => method === 'delete' && key.startsWith('ckpt:t:'));
    const toBob = store.setTags('s', { user: 'bob' });
    const release = await held;
    await store.setTags('s', { user: 'ann' });
    release();
    await toBob;
    expect(await listed(store, { user: 'ann' })).toEqual(['s']);
    expect(await listed(store, { user: 'bob' })).toEqual([]);
  });

  it('keeps a session listed through checkpoints in the same millisecond', async () => {
    vi.spyOn(Date, 'now').mockReturnValue(1_700_000_000_000);
    const store = new CheckpointStore(kvBackend(memoryKv()));
    await store.checkpoint('s', 1, { tags: { user: 'ann' } });
    await store.checkpoint('s', 2);
    await store.rollback('s', 1);
    expect(await listed(store, { user: 'ann' })).toEqual(['s']);
  });

  it("commits the tags of another caller's append with its body, and lists the session once", async () => {
    const { kv, holdNext } = versionedKv();
    const store = new CheckpointStore(kvBackend(kv));
    await store.checkpoint('s', 'one', { tags: { status: 'open' } });
    const held = holdNext((method, key) => method === 'setIfVersion' && key === 'ckpt:s:s');
    const first = store.checkpoint('s', 'two', { tags: { status: 'done' } });
    const release = await held;
    // This one finds the first one's body, commits it (with its tags), then writes its own.
    await store.checkpoint('s', 'three');
    release();
    expect((await first).seq).toBe(2);
    expect((await store.info('s'))?.tags).toEqual({ status: 'done' });
    expect(await listed(store, { status: 'done' })).toEqual(['s']);
    expect(await listed(store, { status: 'open' })).toEqual([]);
  });

  it('finds every session tagged at once by many callers', async () => {
    const kv = memoryKv();
    const stores = [0, 1, 2].map(() => new CheckpointStore(kvBackend(kv)));
    await Promise.all(
      Array.from({ length: 60 }, (_, i) =>
        stores[i % 3]!.checkpoint(`c${i % 10}`, i, { tags: { n: String(i % 4) } }),
      ),
    );
    await Promise.all(
      Array.from({ length: 30 }, (_, i) => stores[i % 3]!.setTags(`c${i % 10}`, { n: 'x' })),
    );
    for (const n of ['0', '1', '2', '3', 'x']) {
      expect(await listed(stores[0]!, { n })).toEqual(await expected(stores[0]!, { n }));
    }
    expect(await listed(stores[0]!, { n: 'x' })).toHaveLength(10);
  });
});

describe('kvBackend tag index after a write cut short', () => {
  /** Each write that moves a session's entries, on a store holding tagged sessions. */
  const writes: [string, (store: CheckpointStore) => Promise<unknown>][] = [
    ['a tagged checkpoint', (store) => store.checkpoint('a', 'x', { tags: { user: 'cy' } })],
    ['a checkpoint', (store) => store.checkpoint('a', 'x')],
    ['setTags', (store) => store.setTags('a', { user: 'cy', status: 'done' })],
    ['a rollback', (store) => store.rollback('a', 1)],
    ['a fork', (store) => store.fork('a', { newId: 'f' })],
    ['a delete', (store) => store.delete('a')],
    [
      'an import in place of a session',
      (store) => store.importSession(imported('a', { user: 'cy' }), { ifExists: 'replace' }),
    ],
  ];

  for (const [what, write] of writes) {
    it(`${what}, at any of its calls: every listing stays the catalog's`, async () => {
      for (const after of [false, true]) {
        for (let n = 1; n <= 12; n++) {
          const kv = memoryKv();
          const store = new CheckpointStore(kvBackend(kv));
          await store.checkpoint('a', 1, { tags: { user: 'ann', status: 'open' } });
          await store.checkpoint('a', 2);
          await store.checkpoint('b', 1, { tags: { user: 'ann' } });
          const cut = new CheckpointStore(kvBackend(failingAt(kv, n, after)));
          await write(cut).catch(() => {});
          const wheres: Record<string, string>[] = [
            { user: 'ann' },
            { user: 'cy' },
            { status: 'open' },
            { status: 'done' },
          ];
          for (const where of wheres) {
            expect(await listed(store, where, 1), `${n} ${after} ${JSON.stringify(where)}`).toEqual(
              await expected(store, where),
            );
          }
          // And the session goes on being written and listed.
          if ((await store.info('a')) !== null) {
            await store.checkpoint('a', 'again', { tags: { user: 'dee' } });
            expect(await listed(store, { user: 'dee' })).toEqual(['a']);
          }
        }
      }
    });
  }

  it('a page reads on past entries left behind, and fills up', async () => {
    const kv = memoryKv();
    // A KV that never removes an entry: as if every write was cut short before it could.
    const keeping: KvStore = {
      ...kv,
      delete: async (key) => (key.startsWith('ckpt:t:') ? true : kv.delete(key)),
    };
    const store = new CheckpointStore(kvBackend(keeping));
    for (let i = 0; i < 6; i++) await store.checkpoint(`s${i}`, 0, { tags: { k: 'v' } });
    for (let step = 1; step <= 4; step++) {
      for (let i = 0; i < 6; i++) await store.checkpoint(`s${i}`, step);
    }
    await store.setTags('s2', { k: 'w' });
    expect(await listed(store, { k: 'v' }, 2)).toEqual(await expected(store, { k: 'v' }));
    expect(await listed(store, { k: 'v' }, 2)).toHaveLength(5);
    expect((await store.sessions({ where: { k: 'v' }, limit: 3 })).items).toHaveLength(3);
  });
});

describe('kvBackend tags on a KV without list()', () => {
  it('keeps tags and their entries, so that a kvBackend with list() over the same store lists them', async () => {
    const kv = memoryKv();
    const minimal = new CheckpointStore(kvBackend({ get: kv.get, set: kv.set, delete: kv.delete }));
    expect(minimal.capabilities.tags).toBe(true);
    expect(minimal.capabilities.listSessions).toBe(false);
    await minimal.checkpoint('a', 1, { tags: { user: 'ann' } });
    await minimal.checkpoint('b', 1, { tags: { user: 'bob' } });
    await minimal.setTags('b', { user: 'ann' });
    expect((await minimal.info('b'))?.tags).toEqual({ user: 'ann' });
    const err = await minimal.sessions({ where: { user: 'ann' } }).catch((e: unknown) => e);
    expect(isCkptError(err) && err.code).toBe('UNSUPPORTED');
    const listing = new CheckpointStore(kvBackend(kv));
    expect(await listed(listing, { user: 'ann' })).toEqual(['b', 'a']);
  });
});

describe('kvBackend tags and watch()', () => {
  const kinds = (page: Awaited<ReturnType<NonNullable<CheckpointBackend['changes']>>>) =>
    page === 'expired' ? page : page.changes.map((c) => [c.sessionId, c.kind]);

  it("on a log of writes: setTags is no change, and a tagged checkpoint's entries are none", async () => {
    const backend = kvBackend(loggedKv().kv);
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', 1);
    const at = await logEnd(backend);
    await store.setTags('s', { user: 'ann' });
    await store.checkpoint('s', 2, { tags: { user: 'bob' } });
    expect(kinds(await backend.changes!({ after: at, limit: 100 }))).toEqual([['s', 'checkpoint']]);
  });

  it('by polling: setTags is no change, and a tagged checkpoint one', async () => {
    const backend = kvBackend(memoryKv(), { watchByPolling: true });
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', 1, { tags: { user: 'ann' } });
    let at = await logEnd(backend);
    await store.setTags('s', { user: 'bob' });
    let page = await backend.changes!({ after: at, limit: 100 });
    expect(kinds(page)).toEqual([]);
    at = page === 'expired' ? at : page.position;
    await store.checkpoint('s', 2, { tags: { user: 'cy' } });
    page = await backend.changes!({ after: at, limit: 100 });
    expect(kinds(page)).toEqual([['s', 'checkpoint']]);
  });
});
