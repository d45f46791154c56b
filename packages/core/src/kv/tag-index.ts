/**
 * kvBackend's index of tags, so that `sessions({ where })` reads the sessions that have a tag in
 * the catalog's order, rather than the whole catalog. Each tag of a tagged session is an entry
 * (see layout.ts):
 *
 *   t:TAG:VALUE:POS TOKEN  ->  '1'
 *
 * POS is the session's updatedAt and id, written so that `list` of one pair's entries answers
 * them in the catalog's order (newest-first.ts); TOKEN is the record's `tagged`.
 *
 * An entry stands for its session only while the session's record names its token. Every write
 * that changes a session's tags or updatedAt gives the record a fresh token, writes the entries
 * under it before the record, and removes the entries of the token it replaced after (or its
 * own, when the record's swap failed). So a record is never read without its entries, and a
 * reader checks each entry against the record and skips one whose token the record does not
 * name: an entry whose writer has not removed it yet, one written for a swap that failed or has
 * not come yet, or one a crash left behind (which stays, costing a read, until `destroy`). A
 * reader never removes an entry, as it cannot tell one left behind from one whose record is
 * about to be written. And as a token is one record's, a writer removing the entries of the
 * record it replaced never removes those that a later write made for the same tag and time.
 */
import type { SessionPosition } from '../adapter/backend.js';
import { type Tags, tagsMatch } from '../values/tags.js';
import type { KvStore } from './kv-store.js';
import type { kvKeys, SessionRecord } from './layout.js';
import { newestFirst, pastNewestFirst, readNewestFirst } from './newest-first.js';

/** An entry's value: its key says everything. */
const PRESENT = '1';
/** The entries a listing asks `list` for at a time, at least and at most. */
const FEWEST_LISTED = 100;
const MOST_LISTED = 1000;

/** What a record's tags are in it: `tags` with the token of their entries, or nothing. */
export function tagFields(
  tags: Tags | undefined,
  token: string,
): Pick<SessionRecord, 'tags' | 'tagged'> {
  return tags === undefined || Object.keys(tags).length === 0 ? {} : { tags, tagged: token };
}

/** Whether two sessions' tags are the same (absent: none). */
export function sameTags(a: Tags | undefined, b: Tags | undefined): boolean {
  const pairs = Object.entries(a ?? {});
  return pairs.length === Object.keys(b ?? {}).length && tagsMatch(b, a ?? {});
}

/** `rec` without its tags, for a record to be given others. */
export function untagged(rec: SessionRecord): SessionRecord {
  const { tags: _, tagged: __, ...rest } = rec;
  return rest;
}

/** What a listing by tags asks for: as `CheckpointBackend.sessions`, with pairs in `where`. */
export interface TaggedQuery {
  where: Tags;
  after: SessionPosition | null;
  limit: number;
  prefix: string;
}

/** The tag index of `kvBackend` on `kv`, for the keys `keys` lays out. */
export function tagIndex(kv: KvStore, keys: ReturnType<typeof kvKeys>) {
  /** The keys of the entries that stand for session `sessionId` while its record is `rec`. */
  const entriesOf = (
    sessionId: string,
    rec: Pick<SessionRecord, 'tags' | 'tagged' | 'updatedAt'>,
  ): string[] => {
    if (rec.tagged === undefined || rec.tags === undefined) return [];
    const position = newestFirst(rec.updatedAt, sessionId);
    return Object.entries(rec.tags).map(
      ([key, value]) => keys.tagEntries(key, value) + position + rec.tagged,
    );
  };

  const write = async (entries: readonly string[]) => {
    await Promise.all(entries.map((entry) => kv.set(entry, PRESENT)));
  };

  const remove = async (entries: readonly string[]) => {
    await Promise.all(entries.map((entry) => kv.delete(entry)));
  };

  /**
   * The sessions (with their records, as `read` answers them) that have every tag of `where`,
   * in the catalog's order, past `after`, at most `limit`: the entries of where's first pair,
   * each checked against its record (its token, and the other pairs).
   */
  const list = async (
    query: TaggedQuery,
    read: (sessionId: string) => Promise<SessionRecord | null>,
  ): Promise<[string, SessionRecord][]> => {
    const { where, limit, prefix } = query;
    const [key, value] = Object.entries(where)[0]!;
    const base = keys.tagEntries(key, value);
    const past = query.after === null ? '' : pastNewestFirst(query.after);
    if (past === null) return [];
    const step = Math.min(Math.max(limit, FEWEST_LISTED), MOST_LISTED);
    const found: [string, SessionRecord][] = [];
    let after = past === '' ? undefined : base + past;
    for (;;) {
      const listed = await kv.list!(
        base,
        after === undefined ? { limit: step } : { after, limit: step },
      );
      const candidates = [];
      for (const entry of listed) {
        const parsed = readNewestFirst(entry.slice(base.length));
        if (parsed?.position.sessionId.startsWith(prefix)) {
          candidates.push({ ...parsed.position, token: parsed.rest });
        }
      }
      // Read at once only as many records as the page still lacks: the rest may not be needed.
      for (let i = 0; i < candidates.length && found.length < limit; ) {
        const batch = candidates.slice(i, i + limit - found.length);
        i += batch.length;
        const records = await Promise.all(batch.map((entry) => read(entry.sessionId)));
        for (const [j, entry] of batch.entries()) {
          const rec = records[j];
          if (
            rec != null &&
            rec.tagged === entry.token &&
            rec.updatedAt === entry.updatedAt &&
            tagsMatch(rec.tags, where)
          ) {
            found.push([entry.sessionId, rec]);
          }
        }
      }
      if (found.length >= limit || listed.length < step) return found;
      after = listed[listed.length - 1];
    }
  };

  return { entriesOf, write, remove, list };
}

export type TagIndex = ReturnType<typeof tagIndex>;
