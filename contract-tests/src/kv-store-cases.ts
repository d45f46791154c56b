/**
 * `runKvStoreTests`: the `KvStore` contract checked method by method, beneath `kvBackend`, so
 * that a store that breaks it fails a case naming the method and what it did, rather than a
 * case of the whole suite several steps later.
 */
import { compareCodePoints, type KvStore } from '@ckpt/core';
import { afterEach, beforeEach, describe, expect, it } from 'vitest';

/** How `runKvStoreTests` opens and cleans up a store. */
export interface KvStoreHarness {
  /** Shown in test titles. */
  name: string;
  /** A fresh, isolated store for one test: nothing another test wrote may be visible. */
  create(): KvStore | Promise<KvStore>;
  /** Release what `create` opened. Default: `kv.close()`, where it has one. */
  destroy?(kv: KvStore): void | Promise<void>;
}

/**
 * The longest key `kvBackend` writes, past its prefix: an idempotency key's, `i:`, an id and a
 * key of 255 four-byte characters each, and a generation of 12 hex digits (2,056 bytes).
 */
const LONGEST_KEY = `i:${'\u{1F99C}'.repeat(255)}:0123456789ab:${'\u{1F99C}'.repeat(255)}`;

/** Characters a key may hold: ids, scopes and keys are any Unicode but NUL and lone surrogates. */
const ODD_KEYS = [
  'a b',
  'a:b',
  'a%3Ab',
  'é',
  'e\u0301',
  '\u{1F99C}',
  '\uFFFF',
  'line\nbreak',
  '\'"\\',
];

/** Register the `KvStore` cases for the store `harness` opens. */
export function runKvStoreTests(harness: KvStoreHarness): void {
  describe(`KvStore contract: ${harness.name}`, { timeout: 60_000 }, () => {
    let opened: KvStore | undefined;
    beforeEach(async () => {
      opened = await harness.create();
    });
    afterEach(async () => {
      const kv = opened;
      opened = undefined;
      if (kv) await (harness.destroy ? harness.destroy(kv) : kv.close?.());
    });
    const kv = () => opened!;

    it('get() answers undefined (or null) for a key never set', async () => {
      expect((await kv().get('never')) ?? undefined).toBeUndefined();
    });

    it('get() answers exactly the string set() was given, for odd keys and values', async () => {
      for (const key of ODD_KEYS) {
        await kv().set(key, `value of ${key}`);
        expect(await kv().get(key), `get(${JSON.stringify(key)})`).toBe(`value of ${key}`);
      }
    });

    it('set() replaces the value of a key already set', async () => {
      await kv().set('k', 'first');
      await kv().set('k', 'second');
      expect(await kv().get('k')).toBe('second');
    });

    it('set() and get() carry the longest key kvBackend writes (2,056 bytes past its prefix)', async () => {
      await kv().set(LONGEST_KEY, 'long');
      expect(await kv().get(LONGEST_KEY)).toBe('long');
    });

    it('set() and get() carry the largest value kvBackend writes (a body of 8 MiB and its header)', async () => {
      const value = `{"seq":1}\n"${'x'.repeat(8 * 1024 * 1024)}"\n{}\n[]`;
      await kv().set('big', value);
      expect((await kv().get('big')) === value, 'get() answered another value').toBe(true);
    });

    it('delete() answers true for a key that was there, and the key is gone', async () => {
      await kv().set('k', 'v');
      expect(Boolean(await kv().delete('k'))).toBe(true);
      expect((await kv().get('k')) ?? undefined).toBeUndefined();
    });

    it('delete() answers false for a key that was not there', async () => {
      expect(Boolean(await kv().delete('never')), 'delete() of an absent key answered true').toBe(
        false,
      );
      await kv().set('k', 'v');
      await kv().delete('k');
      expect(Boolean(await kv().delete('k')), 'a second delete() answered true').toBe(false);
    });

    describe('compareAndSet()', () => {
      const cas = () => kv().compareAndSet?.bind(kv());
      const lacking = 'the store has no compareAndSet()';

      it('writes only when the key holds `expected`', async (ctx) => {
        const compareAndSet = cas();
        if (!compareAndSet) return ctx.skip(lacking);
        await kv().set('k', 'a');
        expect(Boolean(await compareAndSet('k', 'b', 'c')), 'it ignored `expected`').toBe(false);
        expect(await kv().get('k'), 'a refused compareAndSet() changed the value').toBe('a');
        expect(Boolean(await compareAndSet('k', 'a', 'c'))).toBe(true);
        expect(await kv().get('k')).toBe('c');
      });

      it('with expected null, writes only a key that is absent', async (ctx) => {
        const compareAndSet = cas();
        if (!compareAndSet) return ctx.skip(lacking);
        expect(Boolean(await compareAndSet('k', null, 'a'))).toBe(true);
        expect(
          Boolean(await compareAndSet('k', null, 'b')),
          'it wrote over a key that was there',
        ).toBe(false);
        expect(await kv().get('k')).toBe('a');
        await kv().delete('k');
        expect(Boolean(await compareAndSet('k', null, 'c')), 'a deleted key is absent').toBe(true);
      });

      it('lets exactly one of many callers win a race from the same expected value', async (ctx) => {
        const compareAndSet = cas();
        if (!compareAndSet) return ctx.skip(lacking);
        await kv().set('k', 'start');
        const won = await Promise.all(
          Array.from({ length: 16 }, (_, i) => compareAndSet('k', 'start', `caller ${i}`)),
        );
        expect(won.filter(Boolean), 'callers that compareAndSet() answered true').toHaveLength(1);
        expect(await kv().get('k')).toBe(`caller ${won.findIndex(Boolean)}`);
      });
    });

    describe('getWithVersion() and setIfVersion()', () => {
      const pair = () => {
        const store = kv();
        return store.getWithVersion && store.setIfVersion
          ? {
              read: store.getWithVersion.bind(store),
              write: store.setIfVersion.bind(store),
            }
          : null;
      };

      it('getWithVersion() answers the value set() was given, and undefined for an absent key', async (ctx) => {
        const versioned = pair();
        if (!versioned) return ctx.skip('the store has no getWithVersion() and setIfVersion()');
        expect((await versioned.read('never')) ?? undefined).toBeUndefined();
        await kv().set('k', 'v');
        expect((await versioned.read('k'))?.value).toBe('v');
      });

      it('setIfVersion() writes only while the version is the one read, and every write changes it', async (ctx) => {
        const versioned = pair();
        if (!versioned) return ctx.skip('the store has no getWithVersion() and setIfVersion()');
        await kv().set('k', 'a');
        const first = (await versioned.read('k'))!;
        expect(Boolean(await versioned.write('k', 'b', first.version))).toBe(true);
        const second = (await versioned.read('k'))!;
        expect(second.version, 'a write left the version as it was').not.toEqual(first.version);
        expect(
          Boolean(await versioned.write('k', 'c', first.version)),
          'it ignored a stale version',
        ).toBe(false);
        expect(await kv().get('k'), 'a refused setIfVersion() changed the value').toBe('b');
        await kv().set('k', 'b');
        expect(
          Boolean(await versioned.write('k', 'd', second.version)),
          'set() left the version as it was',
        ).toBe(false);
      });

      it('setIfVersion() with version null writes only a key that is absent', async (ctx) => {
        const versioned = pair();
        if (!versioned) return ctx.skip('the store has no getWithVersion() and setIfVersion()');
        expect(Boolean(await versioned.write('k', 'a', null))).toBe(true);
        expect(
          Boolean(await versioned.write('k', 'b', null)),
          'it wrote over a key that was there',
        ).toBe(false);
        expect(await kv().get('k')).toBe('a');
      });

      it('lets exactly one of many callers win a race from the same version', async (ctx) => {
        const versioned = pair();
        if (!versioned) return ctx.skip('the store has no getWithVersion() and setIfVersion()');
        await kv().set('k', 'start');
        const { version } = (await versioned.read('k'))!;
        const won = await Promise.all(
          Array.from({ length: 16 }, (_, i) => versioned.write('k', `caller ${i}`, version)),
        );
        expect(won.filter(Boolean), 'callers that setIfVersion() answered true').toHaveLength(1);
      });
    });

    describe('list()', () => {
      const listOf = () => kv().list?.bind(kv());

      it('answers the keys under the prefix, ascending by UTF-8 bytes (code points)', async (ctx) => {
        const list = listOf();
        if (!list) return ctx.skip('the store has no list()');
        const keys = ['p:b', 'p:\u{1F99C}', 'p:\uFFFF', 'p:a', 'p:a:b', 'p:A'];
        for (const key of [...keys, 'q:a', 'p']) await kv().set(key, 'v');
        expect(await list('p:')).toEqual([...keys].sort(compareCodePoints));
      });

      it('answers only keys strictly after `after`, even one that is not a key', async (ctx) => {
        const list = listOf();
        if (!list) return ctx.skip('the store has no list()');
        for (const key of ['p:a', 'p:b', 'p:c']) await kv().set(key, 'v');
        expect(
          await list('p:', { after: 'p:a' }),
          'list() answered `after` itself or keys before it',
        ).toEqual(['p:b', 'p:c']);
        expect(await list('p:', { after: 'p:bb' })).toEqual(['p:c']);
      });

      it('answers at most `limit` keys, the first ones', async (ctx) => {
        const list = listOf();
        if (!list) return ctx.skip('the store has no list()');
        for (const key of ['p:a', 'p:b', 'p:c']) await kv().set(key, 'v');
        expect(await list('p:', { limit: 2 })).toEqual(['p:a', 'p:b']);
        expect(await list('p:', { after: 'p:a', limit: 1 })).toEqual(['p:b']);
      });

      it('answers no deleted key', async (ctx) => {
        const list = listOf();
        if (!list) return ctx.skip('the store has no list()');
        for (const key of ['p:a', 'p:b']) await kv().set(key, 'v');
        await kv().delete('p:a');
        expect(await list('p:')).toEqual(['p:b']);
      });
    });
  });
}
