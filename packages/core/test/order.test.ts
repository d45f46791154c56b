import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints, prefixUpperBound } from '../src/adapter/order.js';

describe('compareCodePoints', () => {
  it('orders strings exactly as their UTF-8 bytes do', () => {
    fc.assert(
      fc.property(fc.string({ unit: 'grapheme' }), fc.string({ unit: 'grapheme' }), (a, b) => {
        const bytes = Math.sign(Buffer.compare(Buffer.from(a), Buffer.from(b)));
        expect(Math.sign(compareCodePoints(a, b))).toBe(bytes);
      }),
      { numRuns: 2000 },
    );
  });

  it('puts an astral character after every BMP character, unlike UTF-16 order', () => {
    expect(compareCodePoints('\u{1F99C}', '\uffff')).toBeGreaterThan(0);
    expect('\u{1F99C}' < '\uffff').toBe(true);
  });
});

describe('prefixUpperBound', () => {
  it('bounds exactly the strings that start with the prefix', () => {
    fc.assert(
      fc.property(
        fc.string({ unit: 'grapheme', minLength: 1 }),
        fc.string({ unit: 'grapheme' }),
        (prefix, other) => {
          const bound = prefixUpperBound(prefix)!;
          const inRange =
            compareCodePoints(other, prefix) >= 0 && compareCodePoints(other, bound) < 0;
          expect(inRange).toBe(other.startsWith(prefix));
          expect(compareCodePoints(prefix + other, bound)).toBeLessThan(0);
        },
      ),
      { numRuns: 2000 },
    );
  });

  it('steps over the surrogate range and past U+10FFFF', () => {
    expect(prefixUpperBound('a\ud7ff')).toBe('a\ue000');
    expect(prefixUpperBound('a\u{10FFFF}')).toBe('b');
    expect(prefixUpperBound('')).toBeNull();
  });
});
