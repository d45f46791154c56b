import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  rangesAppend,
  rangesCount,
  rangesDescending,
  rangesFrom,
  rangesHas,
} from '../src/kv/seq-ranges.js';

const seqSets = fc.uniqueArray(fc.integer({ min: 1, max: 60 }), { maxLength: 40 });

describe('seq ranges', () => {
  it('hold exactly the seqs they were built from', () => {
    fc.assert(
      fc.property(seqSets, (seqs) => {
        const ranges = rangesFrom(seqs);
        expect(rangesCount(ranges)).toBe(seqs.length);
        for (let s = 1; s <= 61; s++) expect(rangesHas(ranges, s)).toBe(seqs.includes(s));
        expect(rangesDescending(ranges, null, 1000)).toEqual(seqs.slice().sort((a, b) => b - a));
      }),
    );
  });

  it('merge an appended seq into the top range', () => {
    expect(rangesAppend([[1, 3]], 4)).toEqual([[1, 4]]);
    expect(rangesAppend([[1, 3]], 6)).toEqual([
      [1, 3],
      [6, 6],
    ]);
  });

  it('list below a seq, highest first, up to a limit', () => {
    expect(rangesDescending(rangesFrom([1, 2, 3, 7, 8]), 8, 3)).toEqual([7, 3, 2]);
  });
});
