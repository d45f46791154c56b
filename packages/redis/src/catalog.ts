/**
 * A page of the session catalog, which is split in one sorted set per shard. Each slice is
 * read in the page's order (newest first for a listing, oldest first for a sweep), so the page
 * is the top of the slices' tops. Asking every slice for a whole page would read SHARDS times
 * the page; instead each slice is asked for a small share first, and only a slice whose share
 * reaches into the page is asked for more. So a page costs about the same at 100 sessions as
 * at 100,000.
 */

/**
 * Read up to `count` members of `shard`'s slice in the page's order, strictly past `from` (a
 * ZRANGEBYLEX bound: `(member`, or the slice's start).
 */
export type ReadSlice = (shard: number, from: string, count: number) => Promise<string[]>;

/** The order of a page: negative when `a` comes before `b`. */
export type PageOrder = (a: string, b: string) => number;

/** Members are ASCII, so JavaScript's string order is their byte order; newest first. */
export const newestFirst: PageOrder = (a, b) => (a < b ? 1 : a > b ? -1 : 0);

/** Oldest first: the order a sweep reads the catalog in. */
export const oldestFirst: PageOrder = (a, b) => newestFirst(b, a);

/**
 * The first `limit` members of all `shards` slices past `from` (the slices' start, or
 * `(member`), in `order`. At most two rounds of reads: a share of each slice, then the rest of
 * the page from the slices whose share was not enough.
 */
export async function catalogPage(
  shards: number,
  from: string,
  limit: number,
  read: ReadSlice,
  order: PageOrder = newestFirst,
): Promise<string[]> {
  const share = Math.min(limit, Math.ceil((2 * limit) / shards) + 1);
  const slices = await Promise.all(
    Array.from({ length: shards }, async (_, shard) => {
      const members = await read(shard, from, share);
      return { shard, members, exhausted: members.length < share };
    }),
  );
  for (;;) {
    const merged = slices.flatMap((s) => s.members).sort(order);
    const boundary = merged.length >= limit ? merged[limit - 1]! : null;
    // A slice that may hold more, and whose last member read is still inside the page.
    const short = slices.filter(
      (s) => !s.exhausted && (boundary === null || order(s.members.at(-1)!, boundary) < 0),
    );
    if (short.length === 0) return merged.slice(0, limit);
    await Promise.all(
      short.map(async (s) => {
        const more = await read(s.shard, `(${s.members.at(-1)}`, limit);
        s.members.push(...more);
        s.exhausted = more.length < limit;
      }),
    );
  }
}
