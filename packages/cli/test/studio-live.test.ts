/**
 * `ckpt studio`'s live updates (`/api/events`), served in this process so that the test can
 * count what the studio asks of its store. On a store that can watch its changes (memory,
 * SQLite, PostgreSQL), with the poll an hour away so that only a watch can deliver: a change
 * made elsewhere reaches the catalog's and a session's stream at once, nothing is read while
 * nothing changes, each watched thing is watched once for all its pages, and the watch ends
 * with the last page (PostgreSQL's listening connection with it). A watch that fails is read
 * again and watched anew; a store that cannot watch, or refuses to, is polled.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import {
  type ChangeStream,
  CheckpointStore,
  CkptError,
  openStore,
  type WatchOptions,
} from '@ckpt/core';
import { memory } from '@ckpt/memory';
import type { PostgresBackend } from '@ckpt/postgres';
import { emptyStore, URL_STORES } from '@ckpt/test-stores';
import { afterAll, afterEach, describe, expect, it, vi } from 'vitest';
import { type Studio, startStudio } from '../src/studio/server.js';
import { type EventStream, openEvents } from './support/event-stream.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-studio-live-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// The page itself is not looked at here: a stand-in is enough to start a studio.
writeFileSync(join(dir, 'index.html'), '<!doctype html><title>studio</title>');

/** Longer than any test: a change that arrives came from a watch, not from the poll. */
const HOUR = 3_600_000;
/** So short that a studio polling where it should watch would read dozens of times a second. */
const EAGER_POLL = 20;

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

/** A store as the studio sees it, counting its reads and keeping what each watch was asked. */
function observed(store: CheckpointStore, watch = (o: WatchOptions) => store.watch(o)) {
  const seen = { reads: 0, watches: [] as WatchOptions[] };
  const proxy = new Proxy(store, {
    get(target, key) {
      if (key === 'watch') {
        return (options: WatchOptions) => {
          seen.watches.push(options);
          return watch(options);
        };
      }
      const value: unknown = Reflect.get(target, key, target);
      if (typeof value !== 'function') return value;
      return (...args: unknown[]) => {
        // The two reads a live view makes: the catalog's first session, a session's summary.
        if (key === 'sessions' || key === 'info') seen.reads++;
        return value.apply(target, args);
      };
    },
  });
  return { store: proxy, seen };
}

/** The studios and streams a test opens, closed after it. */
const opened: { close(): Promise<unknown> }[] = [];
afterEach(async () => {
  for (const one of opened.splice(0).reverse()) await one.close();
});

async function studioOn(store: CheckpointStore, pollMs: number): Promise<Studio> {
  const studio = await startStudio({ store, storeUrl: 'test:', port: 0, assetsDir: dir, pollMs });
  opened.push(studio);
  return studio;
}

async function events(studio: Studio, path: string): Promise<EventStream> {
  const token = new URL(studio.url).searchParams.get('token')!;
  const stream = await openEvents(studio.origin, token, path);
  opened.push(stream);
  return stream;
}

const head = (seq: number) => (e: { event: string; data: { head?: number } | null }) =>
  e.event === 'session' && e.data?.head === seq;
const top = (id: string) => (e: { event: string; data: { top?: { sessionId: string } | null } }) =>
  e.event === 'catalog' && e.data.top?.sessionId === id;

/** A store that can watch, as the studio opens it, and another on the same data to write with. */
interface WatchingBackend {
  name: string;
  open(): Promise<{ store: CheckpointStore; writer: CheckpointStore; close(): Promise<void> }>;
  /** The listening connections watchers hold on the server, where it has them (asked on `writer`'s). */
  listeners?(writer: CheckpointStore): Promise<number>;
}

/** Stores on a URL: the studio's and the writer's are two, as two processes' would be. */
const byUrl = (name: string, url: string): WatchingBackend => ({
  name,
  async open() {
    const [store, writer] = [await openStore(url), await openStore(url)];
    await emptyStore(writer, []);
    return {
      store,
      writer,
      close: async () => {
        await emptyStore(writer, []);
        await Promise.all([store.close(), writer.close()]);
      },
    };
  },
});

const sqliteUrl = URL_STORES.find((s) => s.name === 'sqlite')!.url('cli_studio_live', dir);
const postgresUrl = URL_STORES.find((s) => s.name === 'postgres')?.url('cli_studio_live', dir);

const WATCHING: WatchingBackend[] = [
  {
    name: 'memory',
    async open() {
      // One process's store: the writer is the store itself.
      const store = new CheckpointStore(memory());
      return { store, writer: store, close: () => store.close() };
    },
  },
  byUrl('sqlite', sqliteUrl),
  ...(postgresUrl === undefined
    ? []
    : [
        {
          ...byUrl('postgres', postgresUrl),
          async listeners(writer: CheckpointStore) {
            // The application name @ckpt/postgres gives a namespace's listening connections.
            const name = `ckpt watch: ${new URL(postgresUrl).searchParams.get('namespace')}`;
            const { rows } = await (writer.backend as PostgresBackend).pool.query<{ n: number }>(
              'SELECT count(*)::int AS n FROM pg_stat_activity WHERE application_name = $1',
              [name],
            );
            return rows[0]!.n;
          },
        },
      ]),
];

describe.each(WATCHING)('ckpt studio live on a $name store, which can watch', (backend) => {
  it('sends a change made elsewhere to the catalog and to the session at once, the poll an hour away', async () => {
    const { store, writer, close } = await backend.open();
    opened.push({ close });
    expect(store.capabilities.watch).toBe(true);
    await writer.checkpoint('live-a', { n: 1 });
    const studio = await studioOn(store, HOUR);
    const catalog = await events(studio, '/api/events?prefix=live-');
    const session = await events(studio, '/api/events?session=live-a');
    await catalog.next(top('live-a'));
    await session.next(head(1));

    const started = Date.now();
    await writer.checkpoint('live-b', { n: 1 });
    await catalog.next(top('live-b'));
    await writer.checkpoint('live-a', { n: 2 });
    await session.next(head(2));
    await writer.rollback('live-a', 1);
    await session.next(head(1));
    await writer.delete('live-a');
    await session.next((e) => e.event === 'session' && e.data === null);
    // A watch's wake, not a poll an hour away; a few seconds leave room for a busy machine.
    expect(Date.now() - started).toBeLessThan(5_000);
  });

  it('reads nothing while nothing it shows changes, and once for a change', async () => {
    const { store, writer, close } = await backend.open();
    opened.push({ close });
    await writer.checkpoint('live-a', { n: 1 });
    const { store: counted, seen } = observed(store);
    const studio = await studioOn(counted, EAGER_POLL);
    const session = await events(studio, '/api/events?session=live-a');
    await session.next(head(1));
    const before = seen.reads;
    // Another session, or a state scope of the same name, changing is nothing to this view.
    await writer.checkpoint('live-other', { n: 1 });
    await writer.state('live-a').set('k', 1);
    await sleep(1_000);
    expect(seen.reads).toBe(before);

    await writer.checkpoint('live-a', { n: 2 });
    await session.next(head(2));
    await sleep(200);
    expect(seen.reads).toBe(before + 1);
  });

  it('watches each thing once for all its pages, and lets go when the last page leaves or the studio closes', async () => {
    const { store, writer, close } = await backend.open();
    opened.push({ close });
    await writer.checkpoint('live-a', { n: 1 });
    const { store: counted, seen } = observed(store);
    const studio = await studioOn(counted, HOUR);
    /** The listening connections on the server, where the store has them, become `n`. */
    const listenersBecome = async (n: number) => {
      if (backend.listeners) await expect.poll(() => backend.listeners!(writer)).toBe(n);
    };
    await listenersBecome(0);

    const pages = [
      await events(studio, '/api/events?session=live-a'),
      await events(studio, '/api/events?session=live-a'),
    ];
    const catalog = await events(studio, '/api/events');
    for (const page of pages) await page.next(head(1));
    await catalog.next(top('live-a'));
    expect(seen.watches.map(({ sessionId, prefix }) => ({ sessionId, prefix }))).toEqual([
      { sessionId: 'live-a', prefix: undefined },
      { sessionId: undefined, prefix: '' },
    ]);
    const [sessionWatch, catalogWatch] = seen.watches.map((w) => w.signal!);
    // The store's watchers share one listening connection.
    await listenersBecome(1);

    await pages[0]!.close();
    await writer.checkpoint('live-a', { n: 2 });
    await pages[1]!.next(head(2));
    expect(sessionWatch!.aborted).toBe(false);
    await pages[1]!.close();
    await expect.poll(() => sessionWatch!.aborted).toBe(true);
    expect(catalogWatch!.aborted).toBe(false);
    await catalog.close();
    await expect.poll(() => catalogWatch!.aborted).toBe(true);
    await listenersBecome(0);

    // A page back watches anew, until the studio closes.
    const again = await events(studio, '/api/events?session=live-a');
    await again.next(head(2));
    expect(seen.watches).toHaveLength(3);
    await studio.close();
    expect(seen.watches[2]!.signal!.aborted).toBe(true);
    await listenersBecome(0);
  });
});

describe('ckpt studio live when a watch fails or cannot be had', () => {
  it('reads again and watches anew when a watch fails with EXPIRED, so that nothing is missed', async () => {
    const store = new CheckpointStore(memory());
    opened.push(store);
    await store.checkpoint('live-a', { n: 1 });
    let expire!: () => void;
    const expired = new Promise<void>((resolve) => {
      expire = resolve;
    });
    let first = true;
    // The first watch loses what changes (as a change log that let go of it would), then fails.
    const { store: counted, seen } = observed(store, (options) => {
      if (!first) return store.watch(options);
      first = false;
      const lost: ChangeStream = {
        ready: Promise.resolve(),
        [Symbol.asyncIterator]: () => ({
          next: async () => {
            await expired;
            throw new CkptError('EXPIRED', 'the change log let go of what followed');
          },
        }),
      };
      return lost;
    });
    const studio = await studioOn(counted, HOUR);
    const session = await events(studio, '/api/events?session=live-a');
    await session.next(head(1));
    await store.checkpoint('live-a', { n: 2 });
    await sleep(300);
    expect(session.events.map((e) => e.data?.head)).toEqual([1]);

    expire();
    await session.next(head(2));
    await store.checkpoint('live-a', { n: 3 });
    await session.next(head(3));
    expect(seen.watches).toHaveLength(2);
  });

  it('says once that the store refuses a session id, and watches no more', async () => {
    const store = new CheckpointStore(memory());
    opened.push(store);
    const { store: counted, seen } = observed(store);
    const studio = await studioOn(counted, HOUR);
    const session = await events(studio, '/api/events?session=');
    const refused = await session.next();
    expect(refused).toMatchObject({
      event: 'failure',
      data: { error: { code: 'INVALID_ARGUMENT' } },
    });
    // A failure that would pass is watched again after a quarter of a second, then half.
    await sleep(1_000);
    expect(seen.watches).toHaveLength(1);
    expect(session.events).toHaveLength(1);
  });

  it('reads once for a burst of changes told together', async () => {
    const store = new CheckpointStore(memory());
    opened.push(store);
    await store.checkpoint('live-a', { n: 1 });
    const { store: counted, seen } = observed(store);
    const studio = await studioOn(counted, HOUR);
    const session = await events(studio, '/api/events?session=live-a');
    await session.next(head(1));
    const before = seen.reads;
    const burst = 20;
    for (let i = 2; i <= burst + 1; i++) await store.checkpoint('live-a', { n: i });
    await session.next(head(burst + 1));
    await sleep(200);
    // The burst's events come together (the store reads the first change at once, and those
    // that follow together a moment later): a read for each batch, not one a change.
    expect(seen.reads - before).toBeLessThanOrEqual(2);
    const heads = session.events.map((e) => e.data.head);
    expect(heads[0]).toBe(1);
    expect(heads.at(-1)).toBe(burst + 1);
    expect(heads.length).toBeLessThanOrEqual(3);
  });

  it('says a keepalive comment on a stream with nothing to tell for 15 seconds', async () => {
    const store = new CheckpointStore(memory());
    opened.push(store);
    await store.checkpoint('live-a', { n: 1 });
    // Only the studio's timeouts are the test's to move on: its reads and the sockets go on.
    vi.useFakeTimers({ toFake: ['setTimeout', 'clearTimeout'] });
    try {
      const studio = await studioOn(store, HOUR);
      const session = await events(studio, '/api/events?session=live-a');
      await session.next(head(1));
      vi.advanceTimersByTime(14_000);
      expect(session.comments).toEqual([]);
      vi.advanceTimersByTime(1_000);
      await expect.poll(() => session.comments).toEqual(['keepalive']);
    } finally {
      vi.useRealTimers();
    }
  });

  it('polls a store that cannot watch its changes', async () => {
    const backend = memory();
    // A memory store without its change log, as a backend without one is.
    const blind = new Proxy(backend, {
      get(target, key) {
        if (key === 'changes' || key === 'onChanges') return undefined;
        const value: unknown = Reflect.get(target, key, target);
        return typeof value === 'function' ? value.bind(target) : value;
      },
    });
    const store = new CheckpointStore(blind);
    opened.push(store);
    expect(store.capabilities.watch).toBe(false);
    await store.checkpoint('live-a', { n: 1 });
    const { store: counted, seen } = observed(store);
    const studio = await studioOn(counted, 50);
    const catalog = await events(studio, '/api/events?prefix=live-');
    const session = await events(studio, '/api/events?session=live-a');
    await catalog.next(top('live-a'));
    await session.next(head(1));
    await store.checkpoint('live-b', { n: 1 });
    await catalog.next(top('live-b'));
    await store.checkpoint('live-a', { n: 2 });
    await session.next(head(2));
    expect(seen.watches).toEqual([]);
    // It reads on, a change or none: that is all it can do.
    const reads = seen.reads;
    await expect.poll(() => seen.reads).toBeGreaterThan(reads + 2);
  });

  it('polls a store that refuses to watch after all (UNSUPPORTED)', async () => {
    const store = new CheckpointStore(memory());
    opened.push(store);
    await store.checkpoint('live-a', { n: 1 });
    const { store: counted, seen } = observed(store, () => {
      throw new CkptError('UNSUPPORTED', 'this store cannot watch');
    });
    const studio = await studioOn(counted, 50);
    const session = await events(studio, '/api/events?session=live-a');
    await session.next(head(1));
    await store.checkpoint('live-a', { n: 2 });
    await session.next(head(2));
    expect(seen.watches).toHaveLength(1);
    expect(session.events.filter((e) => e.event === 'failure')).toEqual([]);
  });
});
