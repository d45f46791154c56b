import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import {
  rangesAppend,
  rangesCount,
  rangesDescending,
  rangesFrom,
  rangesHas,
  rangesPrune,
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

  it('prune to the newest keepLast plus the head', () => {
    fc.assert(
      fc.property(
        seqSets.filter((s) => s.length > 0),
        fc.nat(),
        fc.integer({ min: 1, max: 10 }),
        (seqs, pick, keep) => {
          const head = seqs[pick % seqs.length]!;
          const { kept, removed } = rangesPrune(rangesFrom(seqs), keep, head);
          const want = new Set([...seqs.sort((a, b) => b - a).slice(0, keep), head]);
          expect(rangesDescending(kept, null, 1000)).toEqual([...want].sort((a, b) => b - a));
          expect(removed.sort((a, b) => a - b)).toEqual(
            seqs.filter((s) => !want.has(s)).sort((a, b) => a - b),
          );
        },
      ),
    );
  });
});
