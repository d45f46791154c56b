/** The value rules: what round-trips exactly, what is refused, and the payload limit. */
import { DEFAULT_MAX_PAYLOAD_BYTES } from '@ckpt/core';
import { describe, expect, it } from 'vitest';
import type { ContractContext } from '../harness.js';
import { expectCkptError } from '../util.js';

class Point {
  constructor(
    public x: number,
    public y: number,
  ) {}
}

function cyclic() {
  const a: Record<string, unknown> = { name: 'a' };
  a.self = { back: a };
  return a;
}

/** [what, value, path the refusal must name] */
const REFUSED: [string, () => unknown, string][] = [
  ['undefined at the top', () => undefined, 'data'],
  ['undefined in an array', () => ({ list: [1, undefined] }), 'data.list[1]'],
  ['a hole in an array', () => ({ list: new Array(3) }), 'data.list[0]'],
  ['a function', () => ({ steps: [{ run: () => 1 }] }), 'data.steps[0].run'],
  ['a symbol', () => ({ s: Symbol('x') }), 'data.s'],
  ['a bigint', () => ({ n: 10n }), 'data.n'],
  ['NaN', () => ({ n: Number.NaN }), 'data.n'],
  ['NaN among numbers', () => ({ scores: [0.5, -0, 2, Number.NaN] }), 'data.scores[3]'],
  ['Infinity', () => ({ n: Number.POSITIVE_INFINITY }), 'data.n'],
  ['-Infinity', () => ({ deep: { n: Number.NEGATIVE_INFINITY } }), 'data.deep.n'],
  ['a cycle', cyclic, 'data.self.back'],
  ['a Date', () => ({ steps: [0, 1, 2, { at: new Date() }] }), 'data.steps[3].at'],
  ['a Map', () => ({ m: new Map([[1, 2]]) }), 'data.m'],
  ['a Set', () => ({ s: new Set([1]) }), 'data.s'],
  ['a class instance', () => ({ p: new Point(1, 2) }), 'data.p'],
  ['a typed array', () => ({ bytes: new Uint8Array(3) }), 'data.bytes'],
  ['a Buffer', () => ({ bytes: Buffer.from('x') }), 'data.bytes'],
  ['a symbol-keyed property', () => ({ [Symbol('k')]: 1 }), 'data'],
  ['a boxed string', () => ({ s: new String('x') }), 'data.s'],
  ['an odd key with a bad value', () => ({ 'my key': Number.NaN }), 'data["my key"]'],
];

/** Values and sizes. */
export function valueCases(t: ContractContext): void {
  describe('values', () => {
    it('round-trips every kind of JSON value exactly', async () => {
      const data = {
        nothing: null,
        yes: true,
        no: false,
        int: 42,
        negative: -7,
        float: 0.1 + 0.2,
        tiny: 5e-324,
        huge: 1.7976931348623157e308,
        safe: Number.MAX_SAFE_INTEGER,
        text: 'plain',
        unicode: 'caf\u00e9 \u{1F99C} \u4e2d\u6587 \u0000 \u2028 "quotes" \\ \n\t',
        loneSurrogateInData: '\ud800 stays',
        empty: { obj: {}, arr: [], str: '' },
        nested: [[[{ deep: [1, [2, [3]]] }]]],
      };
      await t.store.checkpoint('s', data);
      const loaded = (await t.store.load('s'))?.data;
      expect(loaded).toEqual(data);
      expect(JSON.stringify(loaded)).toBe(JSON.stringify(data));
    });

    it.each([null, true, 0, -1.5, '', 'text', [], {}])(
      'round-trips %j as the whole data',
      async (data) => {
        await t.store.checkpoint('s', data);
        expect((await t.store.load('s'))?.data).toEqual(data);
      },
    );

    it('keeps the key order of objects in data, metadata and transcript items', async () => {
      const obj = { zebra: 1, apple: 2, mango: { z: 1, a: 2 } };
      await t.store.checkpoint('s', obj, { metadata: obj, transcript: [obj] });
      const loaded = await t.store.load('s');
      const item = (await t.store.transcript('s')).items[0]?.item;
      for (const value of [loaded?.data, loaded?.metadata, item]) {
        expect(JSON.stringify(value)).toBe(JSON.stringify(obj));
      }
    });

    it('stores a key named __proto__ as plain data without changing a prototype', async () => {
      const data = JSON.parse('{"__proto__": {"polluted": true}, "ok": 1}');
      await t.store.checkpoint('s', data, { metadata: JSON.parse('{"__proto__": 1}') });
      const loaded = await t.store.load('s');
      const back = loaded?.data as Record<string, unknown>;
      expect(Object.getPrototypeOf(back)).toBe(Object.prototype);
      expect(Object.hasOwn(back, '__proto__')).toBe(true);
      expect(JSON.stringify(back)).toBe('{"__proto__":{"polluted":true},"ok":1}');
      expect(({} as Record<string, unknown>).polluted).toBeUndefined();
      expect(Object.hasOwn(loaded?.metadata ?? {}, '__proto__')).toBe(true);
    });

    it('drops object properties whose value is undefined, as JSON.stringify does', async () => {
      await t.store.checkpoint('s', { a: 1, b: undefined, c: { d: undefined } } as never, {
        metadata: { m: undefined, n: 1 } as never,
      });
      const loaded = await t.store.load('s');
      expect(loaded?.data).toEqual({ a: 1, c: {} });
      expect(Object.keys(loaded?.data as object)).toEqual(['a', 'c']);
      expect(loaded?.metadata).toEqual({ n: 1 });
    });

    it('accepts objects without a prototype', async () => {
      const data = Object.assign(Object.create(null), { a: 1 });
      await t.store.checkpoint('s', data);
      expect((await t.store.load('s'))?.data).toEqual({ a: 1 });
    });

    it.each(REFUSED)(
      'refuses %s with INVALID_ARGUMENT naming the path, writing nothing',
      async (_, make, path) => {
        await t.store.checkpoint('s', 'before');
        const err = await expectCkptError(
          t.store.checkpoint('s', make() as never),
          'INVALID_ARGUMENT',
        );
        expect(err.message).toContain(path);
        expect(err.details.argument).toBe(path);
        expect(await t.store.head('s')).toBe(1);
        expect((await t.store.info('s'))?.checkpoints).toBe(1);
      },
    );

    it('refuses a bad value in metadata or transcript naming its path', async () => {
      let err = await expectCkptError(
        t.store.checkpoint('s', 1, { metadata: { when: new Date() } as never }),
        'INVALID_ARGUMENT',
      );
      expect(err.message).toContain('metadata.when');
      err = await expectCkptError(
        t.store.checkpoint('s', 1, { transcript: ['ok', { at: Number.NaN }] as never }),
        'INVALID_ARGUMENT',
      );
      expect(err.message).toContain('transcript[1].at');
      expect(await t.store.info('s')).toBeNull();
    });

    it.each([
      ['an array', [1]],
      ['null', null],
      ['a string', 'meta'],
      ['a Date', new Date()],
    ])('refuses metadata that is %s', async (_, metadata) => {
      await expectCkptError(
        t.store.checkpoint('s', 1, { metadata: metadata as never }),
        'INVALID_ARGUMENT',
      );
      expect(await t.store.info('s')).toBeNull();
    });

    it.each([
      ['a string', 'item'],
      ['an object', { 0: 'item' }],
      ['null', null],
    ])('refuses a transcript that is %s', async (_, transcript) => {
      await expectCkptError(
        t.store.checkpoint('s', 1, { transcript: transcript as never }),
        'INVALID_ARGUMENT',
      );
      expect(await t.store.info('s')).toBeNull();
    });
  });

  describe('payload limit', () => {
    it('round-trips a checkpoint of exactly the default limit (8 MiB)', async () => {
      const metadata = { k: 'vvvvv' };
      const transcript = ['abcdef'];
      const metaBytes = Buffer.byteLength(JSON.stringify(metadata));
      const itemBytes = Buffer.byteLength(JSON.stringify(transcript[0]));
      // data is a JSON string: its encoding adds two quote bytes.
      const exact = 'x'.repeat(DEFAULT_MAX_PAYLOAD_BYTES - 2 - metaBytes - itemBytes);
      await t.store.checkpoint('s', exact, { metadata, transcript });
      const loaded = await t.store.load('s');
      expect(String(loaded?.data).length).toBe(exact.length);
      expect(loaded?.data === exact).toBe(true);
      expect((await t.store.transcript('s')).items[0]?.item).toBe('abcdef');
    }, 120_000);

    it('round-trips one of exactly the default limit whose characters all need escaping', async () => {
      // Quotes and backslashes take two bytes each in JSON, and again in a driver that escapes
      // values into SQL: the payload a server sees can be twice the limit.
      const metadata = { k: 'v' };
      const used = 2 + Buffer.byteLength(JSON.stringify(metadata));
      const pairs = Math.floor((DEFAULT_MAX_PAYLOAD_BYTES - used) / 4);
      const exact = '"\\'.repeat(pairs) + 'x'.repeat(DEFAULT_MAX_PAYLOAD_BYTES - used - 4 * pairs);
      expect(Buffer.byteLength(JSON.stringify(exact)) + used - 2).toBe(DEFAULT_MAX_PAYLOAD_BYTES);
      await t.store.checkpoint('s', exact, { metadata });
      expect((await t.store.load('s'))?.data === exact).toBe(true);
    }, 120_000);

    it('refuses one byte over the limit with PAYLOAD_TOO_LARGE before writing anything', async () => {
      const over = 'x'.repeat(DEFAULT_MAX_PAYLOAD_BYTES - 1);
      const err = await expectCkptError(t.store.checkpoint('s', over), 'PAYLOAD_TOO_LARGE');
      expect(err.message).toMatch(/8388609/);
      expect(await t.store.info('s')).toBeNull();
    }, 120_000);

    it('counts multi-byte characters by their UTF-8 size', async () => {
      const store = t.storeWith({ maxPayloadBytes: 10 });
      await store.checkpoint('s', '\u00e9\u00e9\u00e9\u00e9'); // 2 quotes + 4 x 2 bytes = 10
      await expectCkptError(
        store.checkpoint('s', '\u00e9\u00e9\u00e9\u00e9\u00e9'),
        'PAYLOAD_TOO_LARGE',
      );
      expect(await store.head('s')).toBe(1);
    });

    it('applies maxPayloadBytes to data, metadata and transcript items together', async () => {
      const store = t.storeWith({ maxPayloadBytes: 100 });
      await store.checkpoint('s', 'x'.repeat(98)); // exactly 100
      await expectCkptError(
        store.checkpoint('s', 'x'.repeat(60), { metadata: { m: 'y'.repeat(40) } }),
        'PAYLOAD_TOO_LARGE',
      );
      await expectCkptError(
        store.checkpoint('s', 'x'.repeat(60), { transcript: ['z'.repeat(40)] }),
        'PAYLOAD_TOO_LARGE',
      );
      expect(await store.head('s')).toBe(1);
    });

    it.each([0, -1, 1.5, '10'])(
      'refuses maxPayloadBytes %j with INVALID_ARGUMENT',
      async (value) => {
        await expectCkptError(
          () => t.storeWith({ maxPayloadBytes: value as number }),
          'INVALID_ARGUMENT',
        );
      },
    );
  });
}
