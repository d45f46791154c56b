/**
 * `sessions({ where })`: each shard's slice of the listing read from its tag index (see
 * tagIndexKey in schema.ts) by the taggedPage script, in the catalog's order and with the
 * catalog's members (`<updatedAt>:<hex id>`), so that the page across shards is merged as the
 * catalog's is (catalog.ts). One tag's entries are read, newest first; with several tags, the
 * others are looked up for each entry read. A page reads about as many entries as it lists when
 * the tag it walks is the filter (one tag), however many sessions the store holds.
 */
import type { Tags } from '@ckpt/core/adapter';
import type { ReadSlice } from './catalog.js';
import type { RedisNamespace } from './runner.js';
import { hex, tagIndexKey } from './schema.js';
import { taggedPage } from './statements.js';
import { tagStart } from './tags.js';

/**
 * The most index entries one call of the script reads: a filter that few entries pass is
 * read in several calls, and the server answers others in between.
 */
const READ_PER_CALL = 1000;

/** Read the slices of the sessions that have every tag of `where` and an id starting with `prefix`. */
export function taggedSlices(on: RedisNamespace, where: Tags, prefix: string): ReadSlice {
  const starts = Object.entries(where).map(([key, value]) => tagStart(key, value));
  const hexPrefix = hex(prefix);
  return async (shard, from, count) => {
    const index = tagIndexKey(on.namespace, shard);
    const kept: string[] = [];
    // `from` is a bound of the catalog's: its start (`+`) or `(member`.
    let after = from === '+' ? '' : from.slice(1);
    while (kept.length < count) {
      const [stop, ...tails] = await taggedPage.run<string[]>(
        on.client,
        [index],
        [after, count - kept.length, READ_PER_CALL, hexPrefix, ...starts],
      );
      kept.push(...tails);
      if (stop === '') break;
      after = stop!;
    }
    return kept;
  };
}
