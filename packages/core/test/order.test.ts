import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { compareCodePoints } from '../src/order.js';

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
