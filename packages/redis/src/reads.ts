/**
 * The Redis backend's reads. Each is one script (statements.ts) or command on the slot of its
 * session; a list of sessions or scopes reads every shard (see schema.ts).
 */
import {
  compareSessionsNewestFirst,
  type ExportedStoredCheckpoint,
  type SessionPosition,
  type StoredCheckpoint,
  type StoredCheckpointInfo,
  type StoredLineageEntry,
  type StoredSession,
  type Tags,
  tagsMatch,
  textFromStoredBytes,
} from '@ckpt/core/adapter';
import { catalogPage, type ReadSlice } from './catalog.js';
import { explained, type RedisNamespace } from './runner.js';
import {
  catalogKey,
  hex,
  idsKeys,
  type SessionKeys,
  SHARDS,
  scopeCatalogKey,
  sessionKeys,
  unhex,
} from './schema.js';
import {
  checkpoint,
  padTime,
  parseInfo,
  parseInfoAndPin,
  type Reply,
  seqArg,
  textOf,
} from './script-values.js';
import * as lua from './statements.js';
import { taggedSlices } from './tag-listing.js';
import { tagsOfField } from './tags.js';

/** A checkpoint's needs as the needs hash holds them, `<seq>,<seq>,…` ('' for none). */
function parseNeeds(list: string): number[] {
  return list === '' ? [] : list.split(',').map(Number);
}

/** One session of the describe script's reply (8 fields), or null when it does not exist. */
function describedSession(sessionId: string, fields: Reply): StoredSession | null {
  const [head, count, fid, fseq, created, updated, tags, headInfo] = fields;
  if (head == null) return null;
  return {
    sessionId,
    head: Number(head),
    checkpoints: Number(count),
    forkedFrom: fid == null ? null : { sessionId: fid, seq: Number(fseq) },
    metadata: headInfo ? parseInfo(headInfo).metadata : '{}',
    createdAt: Number(created),
    updatedAt: Number(updated),
    tags: tagsOfField(tags),
  };
}

export async function load(
  on: RedisNamespace,
  sessionId: string,
  seq: number | null,
): Promise<StoredCheckpoint | null> {
  const k = sessionKeys(on.namespace, sessionId);
  if (seq === null) {
    // The session hash keeps a copy of its head (see statements.ts): one command, no script.
    const [head, copied, info, data, pin] = await explained(
      on.client,
      on.client.hmgetBuffer(k.session, 'head', 'hseq', 'hinfo', 'hdata', 'hpin'),
    );
    if (head == null) return null;
    const seqText = textOf(head);
    if (
      textOf(copied) === seqText &&
      info != null &&
      data != null &&
      textOf(pin)?.startsWith(`${seqText} `)
    ) {
      // A seq is ASCII: as many bytes as characters.
      return checkpoint(head, info, data, pin!.subarray(seqText.length + 1));
    }
    // A head moved by a version that kept no copy (or no copy of its pin): read it where
    // every checkpoint is.
  }
  const found = await lua.load.runForBytes<Buffer[] | null>(
    on.client,
    [k.session, k.info, k.data, k.pins],
    [seqArg(seq)],
  );
  return found ? checkpoint(found[0]!, found[1]!, found[2]!, found[3]!) : null;
}

export async function loadByKey(
  on: RedisNamespace,
  sessionId: string,
  idempotencyKey: string,
): Promise<StoredCheckpoint | null> {
  const k = sessionKeys(on.namespace, sessionId);
  const found = await lua.loadByKey.runForBytes<Buffer[] | null>(
    on.client,
    [k.idempotency, k.info, k.data, k.pins],
    [idempotencyKey],
  );
  return found ? checkpoint(found[0]!, found[1]!, found[2]!, found[3]!) : null;
}

export async function session(
  on: RedisNamespace,
  sessionId: string,
): Promise<StoredSession | null> {
  const [described] = await describe(on, [sessionId]);
  return described ?? null;
}

/**
 * Describe sessions with one script call per shard: the sessions of a shard share its slot,
 * so a page of 50 sessions costs at most SHARDS calls, not 50. Null for a missing session.
 */
async function describe(
  on: RedisNamespace,
  sessionIds: readonly string[],
): Promise<(StoredSession | null)[]> {
  const byShard = new Map<string, { at: number; keys: SessionKeys }[]>();
  sessionIds.forEach((sessionId, at) => {
    const keys = sessionKeys(on.namespace, sessionId);
    const shard = byShard.get(keys.catalog) ?? [];
    shard.push({ at, keys });
    byShard.set(keys.catalog, shard);
  });
  const described: (StoredSession | null)[] = sessionIds.map(() => null);
  await Promise.all(
    [...byShard.values()].map(async (shard) => {
      const found = await lua.describe.run<Reply>(
        on.client,
        shard.flatMap(({ keys }) => [keys.session, keys.info]),
        [],
      );
      shard.forEach(({ at }, n) => {
        described[at] = describedSession(sessionIds[at]!, found.slice(8 * n, 8 * n + 8));
      });
    }),
  );
  return described;
}

export async function listCheckpoints(
  on: RedisNamespace,
  sessionId: string,
  query: { beforeSeq: number | null; limit: number },
): Promise<StoredCheckpointInfo[]> {
  const k = sessionKeys(on.namespace, sessionId);
  const flat = await lua.listCheckpoints.run<string[]>(
    on.client,
    [k.seqs, k.info, k.pins],
    [seqArg(query.beforeSeq), query.limit],
  );
  const out: StoredCheckpointInfo[] = [];
  for (let n = 0; n < flat.length; n += 3) {
    out.push({ seq: Number(flat[n]), ...parseInfoAndPin(flat[n + 1]!, flat[n + 2]!) });
  }
  return out;
}

export async function lineage(
  on: RedisNamespace,
  sessionId: string,
  query: { fromSeq: number | null; limit: number; transcript: boolean },
): Promise<StoredLineageEntry[]> {
  const k = sessionKeys(on.namespace, sessionId);
  const flat = await lua.lineage.runForBytes<Buffer[]>(
    on.client,
    [k.session, k.info, k.transcript],
    [seqArg(query.fromSeq), query.limit, query.transcript ? '1' : '0'],
  );
  const width = query.transcript ? 4 : 3;
  const out: StoredLineageEntry[] = [];
  for (let n = 0; n < flat.length; n += width) {
    const parent = textOf(flat[n + 1]!);
    const entry: StoredLineageEntry = {
      seq: Number(textOf(flat[n]!)),
      parent: parent === '' ? null : Number(parent),
      createdAt: Number(textOf(flat[n + 2]!)),
    };
    if (query.transcript) entry.transcript = textFromStoredBytes(flat[n + 3]!);
    out.push(entry);
  }
  return out;
}

/**
 * A page of the catalog (see catalog.ts), or with `where` of the tag index (tag-listing.ts),
 * then its sessions described.
 */
export async function sessions(
  on: RedisNamespace,
  query: { after: SessionPosition | null; limit: number; prefix: string; where?: Tags },
): Promise<StoredSession[]> {
  const { after, limit, prefix, where = {} } = query;
  const filtered = Object.keys(where).length > 0;
  if (!filtered && prefix !== '') return sessionsWithPrefix(on, prefix, after, limit);
  const slices: ReadSlice = filtered
    ? taggedSlices(on, where, prefix)
    : (shard, below, count) =>
        explained(
          on.client,
          on.client.zrevrangebylex(catalogKey(on.namespace, shard), below, '-', 'LIMIT', 0, count),
        );
  return describedPages(on, slices, after, limit, (s) => tagsMatch(s.tags, where));
}

/**
 * The first `limit` sessions past `after` that `slices` list and that are still there and
 * `wanted` when described. One deleted, or retagged, between the two reads is left out, and
 * the page goes on past it, so that a page comes short only at the end of the listing.
 */
async function describedPages(
  on: RedisNamespace,
  slices: ReadSlice,
  after: SessionPosition | null,
  limit: number,
  wanted: (session: StoredSession) => boolean,
): Promise<StoredSession[]> {
  const listed = new Map<string, StoredSession>();
  let from = after === null ? '+' : `(${padTime(after.updatedAt)}:${hex(after.sessionId)}`;
  for (;;) {
    const asked = limit - listed.size;
    const page = await catalogPage(SHARDS, from, asked, slices);
    const described = await describe(
      on,
      page.map((member) => unhex(member.slice(member.indexOf(':') + 1))),
    );
    for (const session of described) {
      // Listed once, even if a write moved it between two reads.
      if (session !== null && wanted(session) && !listed.has(session.sessionId)) {
        listed.set(session.sessionId, session);
      }
    }
    if (page.length < asked || listed.size >= limit) return [...listed.values()];
    from = `(${page.at(-1)}`;
  }
}

/**
 * The sessions whose id starts with `prefix`: from each shard, the ids in the prefix's range
 * of its index (see idsKeys) with their updatedAt, in one script call each; then the page
 * among those, described. Its cost follows the sessions with the prefix, not the catalog.
 */
async function sessionsWithPrefix(
  on: RedisNamespace,
  prefix: string,
  after: SessionPosition | null,
  limit: number,
): Promise<StoredSession[]> {
  // Hex digits sort below `g`: `[hex, hex + g)` is exactly the ids that start with the prefix.
  const range = [`[${hex(prefix)}`, `(${hex(prefix)}g`];
  const found = await Promise.all(
    Array.from({ length: SHARDS }, async (_, shard) => {
      const { ids, built } = idsKeys(on.namespace, shard);
      const catalog = catalogKey(on.namespace, shard);
      const hexIds = await lua.prefixIds.run<string[]>(on.client, [ids, built, catalog], range);
      if (hexIds.length === 0) return [];
      const sessionIds = hexIds.map(unhex);
      const keys = sessionIds.map((id) => sessionKeys(on.namespace, id).session);
      const times = await lua.updatedOf.run<Reply>(on.client, keys, []);
      return sessionIds.flatMap((sessionId, n) =>
        times[n] == null ? [] : [{ sessionId, updatedAt: Number(times[n]) }],
      );
    }),
  );
  const page = found
    .flat()
    .filter((s) => after === null || compareSessionsNewestFirst(s, after) > 0)
    .sort(compareSessionsNewestFirst)
    .slice(0, limit);
  const described = await describe(
    on,
    page.map((s) => s.sessionId),
  );
  return described.filter((s): s is StoredSession => s !== null);
}

export async function exportCheckpoints(
  on: RedisNamespace,
  sessionId: string,
  query: { afterSeq: number | null; limit: number },
): Promise<ExportedStoredCheckpoint[]> {
  const k = sessionKeys(on.namespace, sessionId);
  const flat = await lua.exportCheckpoints.runForBytes<Buffer[]>(
    on.client,
    [k.seqs, k.info, k.data, k.transcript, k.needs, k.pins],
    [seqArg(query.afterSeq), query.limit],
  );
  const out: ExportedStoredCheckpoint[] = [];
  for (let n = 0; n < flat.length; n += 6) {
    out.push({
      ...checkpoint(flat[n]!, flat[n + 1]!, flat[n + 2]!, flat[n + 5]!),
      transcript: textFromStoredBytes(flat[n + 3]!),
      needs: parseNeeds(textOf(flat[n + 4]!)),
    });
  }
  return out;
}

/** Scopes from every shard's catalog of scopes (see schema.ts), merged in byte order. */
export async function stateScopes(
  on: RedisNamespace,
  query: { after: string | null; limit: number },
): Promise<string[]> {
  const min = query.after === null ? '-' : `(${hex(query.after)}`;
  const slices = await Promise.all(
    Array.from({ length: SHARDS }, (_, shard) =>
      explained(
        on.client,
        on.client.zrangebylex(
          scopeCatalogKey(on.namespace, shard),
          min,
          '+',
          'LIMIT',
          0,
          query.limit,
        ),
      ),
    ),
  );
  // Hex of UTF-8 is ASCII ordered as the bytes are, so JavaScript's string order is theirs.
  return slices.flat().sort().slice(0, query.limit).map(unhex);
}
