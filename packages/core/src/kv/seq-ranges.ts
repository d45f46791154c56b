/**
 * A set of seqs kept as sorted, disjoint, inclusive ranges: `[[1, 40], [45, 45]]`. A session's
 * stored seqs are mostly contiguous (appends extend the last range, prune trims the front),
 * so a KV session record can carry the whole set in a few numbers.
 */
export type SeqRanges = [number, number][];

/** Whether `seq` is in the set. */
export function rangesHas(ranges: SeqRanges, seq: number): boolean {
  return ranges.some(([lo, hi]) => seq >= lo && seq <= hi);
}

/** How many seqs the set holds. */
export function rangesCount(ranges: SeqRanges): number {
  return ranges.reduce((n, [lo, hi]) => n + hi - lo + 1, 0);
}

/** The set built from seqs in any order. */
export function rangesFrom(seqs: Iterable<number>): SeqRanges {
  const sorted = [...new Set(seqs)].sort((a, b) => a - b);
  const ranges: SeqRanges = [];
  for (const seq of sorted) {
    const last = ranges[ranges.length - 1];
    if (last && last[1] === seq - 1) last[1] = seq;
    else ranges.push([seq, seq]);
  }
  return ranges;
}

/** The set with `seq` added; `seq` is above every member (appends only grow the top). */
export function rangesAppend(ranges: SeqRanges, seq: number): SeqRanges {
  const copy = ranges.map(([lo, hi]) => [lo, hi] as [number, number]);
  const last = copy[copy.length - 1];
  if (last && last[1] === seq - 1) last[1] = seq;
  else copy.push([seq, seq]);
  return copy;
}

/** Members below `beforeSeq` (null: all), highest first, at most `limit`. */
export function rangesDescending(
  ranges: SeqRanges,
  beforeSeq: number | null,
  limit: number,
): number[] {
  const out: number[] = [];
  for (let i = ranges.length - 1; i >= 0 && out.length < limit; i--) {
    const [lo, hi] = ranges[i]!;
    const top = beforeSeq === null ? hi : Math.min(hi, beforeSeq - 1);
    for (let seq = top; seq >= lo && out.length < limit; seq--) out.push(seq);
  }
  return out;
}

/** Members above `afterSeq` (null: all), lowest first, at most `limit`. */
export function rangesAscending(
  ranges: SeqRanges,
  afterSeq: number | null,
  limit: number,
): number[] {
  const out: number[] = [];
  for (const [lo, hi] of ranges) {
    for (let seq = Math.max(lo, (afterSeq ?? 0) + 1); seq <= hi && out.length < limit; seq++) {
      out.push(seq);
    }
  }
  return out;
}
