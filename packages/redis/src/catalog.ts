/**
 * A page of the session catalog, which is split in one sorted set per shard. Each slice is
 * ordered like the listing (newest first), so the page is the top of the slices' tops. Asking
 * every slice for a whole page would read SHARDS times the page; instead each slice is asked
 * for a small share first, and only a slice whose share reaches into the page is asked for
 * more. So a page costs about the same at 100 sessions as at 100,000.
 */

/** Read up to `count` members of `shard`'s slice, newest first, strictly below `below`. */
export type ReadSlice = (shard: number, below: string, count: number) => Promise<string[]>;

/** Members are ASCII, so JavaScript's string order is their byte order; newest first. */
const newestFirst = (a: string, b: string) => (a < b ? 1 : a > b ? -1 : 0);

/**
 * The first `limit` members of all `shards` slices below `below` (`+` for the start), newest
 * first. At most two rounds of reads: a share of each slice, then the rest of the page from
 * the slices whose share was not enough.
 */
export async function catalogPage(
  shards: number,
  below: string,
  limit: number,
  read: ReadSlice,
): Promise<string[]> {
  const share = Math.min(limit, Math.ceil((2 * limit) / shards) + 1);
  const slices = await Promise.all(
    Array.from({ length: shards }, async (_, shard) => {
      const members = await read(shard, below, share);
      return { shard, members, exhausted: members.length < share };
    }),
  );
  for (;;) {
    const merged = slices.flatMap((s) => s.members).sort(newestFirst);
    const boundary = merged.length >= limit ? merged[limit - 1]! : null;
    // A slice that may hold more, and whose last member read is still inside the page.
    const short = slices.filter(
      (s) => !s.exhausted && (boundary === null || s.members.at(-1)! > boundary),
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
