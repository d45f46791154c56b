/**
 * The key layout. Every key starts with the namespace. A session's keys, and the slice of the
 * session catalog that lists it, share one hash tag: the session's shard's. So every
 * mutation touches keys of one slot only and runs as one script on Redis Cluster, catalog
 * included. Ids, scopes and KV keys are written in hex of their UTF-8 bytes, so no character
 * of an id (`:`, `{`, `}`, `*`, `?`, `[`, `\` …) can reach another key or widen a `SCAN MATCH`.
 */

/**
 * Sessions (and state scopes) spread over this many hash tags. Listing sessions reads one
 * catalog slice per shard, so the number trades cluster balance against listing cost; it is
 * part of the layout and never changes for a namespace.
 */
export const SHARDS = 16;

/**
 * The hash tag of each shard, chosen so that shard n hashes into slots [1024 n, 1024 n + 1023]:
 * a cluster whose masters hold equal runs of slots (as `redis-cli --cluster create` makes
 * them) gets an equal share of the shards.
 */
export const SHARD_TAGS = [
  '00-23',
  '01-20',
  '02-10',
  '03-13',
  '04-2',
  '05-1',
  '06-60',
  '07-63',
  '08-10',
  '09-13',
  '10-3',
  '11-0',
  '12-11',
  '13-12',
  '14-40',
  '15-43',
] as const;

/**
 * The slot of each shard's hash tag (CLUSTER KEYSLOT of `{<tag>}`), where its keys and the
 * channel of its change log live: a cluster's subscriber asks the master of that slot.
 */
export const SHARD_SLOTS = [
  343, 1920, 2319, 4056, 4903, 5236, 6761, 7358, 8612, 10099, 10610, 11809, 13183, 13736, 15154,
  15845,
] as const;

/** Hex of the UTF-8 bytes: only [0-9a-f], ordered as the bytes are. */
export function hex(text: string): string {
  return Buffer.from(text, 'utf8').toString('hex');
}

/** The text whose UTF-8 bytes `encoded` spells in hex. */
export function unhex(encoded: string): string {
  return Buffer.from(encoded, 'hex').toString('utf8');
}

/** FNV-1a over the UTF-8 bytes, reduced to a shard number. */
export function shardOf(text: string): number {
  let hash = 0x811c9dc5;
  for (const byte of Buffer.from(text, 'utf8')) {
    hash ^= byte;
    hash = Math.imul(hash, 0x01000193);
  }
  return (hash >>> 0) % SHARDS;
}

function shardPrefix(ns: string, shard: number): string {
  return `${ns}:{${SHARD_TAGS[shard]}}`;
}

/** The catalog slice of `shard`: a sorted set of `<updatedAt>:<hex id>`, all with score 0. */
export function catalogKey(ns: string, shard: number): string {
  return `${shardPrefix(ns, shard)}:sessions`;
}

/**
 * The tag index of `shard`: a sorted set, all scores 0, with one member for each tag of each of
 * the shard's sessions, `<tag key>=<tag value>\0<updatedAt>:<hex id>` (see tags.ts). One key a
 * shard, not one a tag, so that every script names the keys it touches: a tag's members are a
 * range of it, and within that range they order as the catalog's members do.
 */
export function tagIndexKey(ns: string, shard: number): string {
  return `${shardPrefix(ns, shard)}:tags`;
}

/**
 * The ids of `shard`'s sessions, a sorted set of `<hex id>`, all with score 0, so ordered as
 * the ids' bytes: a prefix of ids is a range of it. `built` marks a shard whose index holds
 * every session, also those written before it existed (see the prefixIds script).
 */
export function idsKeys(ns: string, shard: number): { ids: string; built: string } {
  return { ids: `${shardPrefix(ns, shard)}:ids`, built: `${shardPrefix(ns, shard)}:ids:built` };
}

/**
 * The change log of `shard` (see change-log.ts): a stream of the changes its scripts make, and
 * the floor below which no new entry may go, which readers raise. The stream's name is also
 * the channel the scripts wake watchers on (SPUBLISH), in the same slot.
 */
export interface ChangesKeys {
  stream: string;
  floor: string;
}

/**
 * The entries each shard's change log keeps at least: a watcher further behind in a shard is
 * told it must reload (EXPIRED).
 */
export const KEPT_CHANGES = 10_000;

export function changesKeys(ns: string, shard: number): ChangesKeys {
  const stream = `${shardPrefix(ns, shard)}:changes`;
  return { stream, floor: `${stream}:floor` };
}

/** The keys of one session, in the order the scripts take them. */
export interface SessionKeys {
  /**
   * Hash: head, last, count, created, updated, fid, fseq, tags (JSON text, only when it has
   * some), and a copy of the head (hseq, hinfo, hdata, hpin).
   */
  session: string;
  /** Hash seq → `<parent> <createdAt> <metadata>`. */
  info: string;
  /** Hash seq → data. */
  data: string;
  /** Hash seq → transcript items, only for checkpoints that have some. */
  transcript: string;
  /** Sorted set of the stored seqs, each scored by itself. */
  seqs: string;
  /** Hash idempotency key → seq. */
  idempotency: string;
  /** Hash seq → the seqs it needs, `<seq>,<seq>,…`, only for checkpoints that need some. */
  needs: string;
  /**
   * Hash seq → its pin (see script-values.ts), only for pinned checkpoints: the key exists
   * exactly while the session holds a pin, which is what a sweep asks.
   */
  pins: string;
  /** The catalog slice that lists the session. */
  catalog: string;
  /** The index of its shard's ids (see idsKeys). */
  ids: string;
  /** The tag index of its shard (see tagIndexKey). */
  tags: string;
  /** The change log of its shard. */
  changes: ChangesKeys;
  /** The id in hex, as the catalog spells it. */
  hexId: string;
}

export function sessionKeys(ns: string, sessionId: string): SessionKeys {
  const shard = shardOf(sessionId);
  const hexId = hex(sessionId);
  const at = `${shardPrefix(ns, shard)}:`;
  return {
    session: `${at}s:${hexId}`,
    info: `${at}i:${hexId}`,
    data: `${at}d:${hexId}`,
    transcript: `${at}t:${hexId}`,
    seqs: `${at}q:${hexId}`,
    idempotency: `${at}k:${hexId}`,
    needs: `${at}n:${hexId}`,
    pins: `${at}p:${hexId}`,
    catalog: catalogKey(ns, shard),
    ids: idsKeys(ns, shard).ids,
    tags: tagIndexKey(ns, shard),
    changes: changesKeys(ns, shard),
    hexId,
  };
}

/**
 * The keys that belong to a session alone, in the order the scripts take them: session info
 * data transcript seqs idempotency needs pins.
 */
export function ownKeys(k: SessionKeys): string[] {
  return [k.session, k.info, k.data, k.transcript, k.seqs, k.idempotency, k.needs, k.pins];
}

/**
 * Every key of a session, in the order the scripts that create, remove or replace it whole
 * take them: its own keys, then its shard's catalog, index of ids, change log and tag index.
 */
export function wholeSession(k: SessionKeys): string[] {
  return [...ownKeys(k), k.catalog, k.ids, ...logKeys(k.changes), k.tags];
}

/** A change log's keys as the scripts take them: stream, floor. */
export function logKeys(changes: ChangesKeys): string[] {
  return [changes.stream, changes.floor];
}

/** A hash of values and the sorted set of their keys that orders them (see IndexedHash). */
export interface IndexedHashKeys {
  values: string;
  index: string;
}

/**
 * The values of one state scope, the catalog of its shard's scopes (a sorted set of the hex of
 * each scope that holds a key, all scores 0, so ordered as the scopes' bytes), and its shard's
 * change log.
 */
export function stateKeys(
  ns: string,
  scope: string,
): IndexedHashKeys & { catalog: CatalogEntry; changes: ChangesKeys } {
  const shard = shardOf(scope);
  const at = `${shardPrefix(ns, shard)}:`;
  const hexScope = hex(scope);
  return {
    values: `${at}v:${hexScope}`,
    index: `${at}x:${hexScope}`,
    catalog: { key: scopeCatalogKey(ns, shard), member: hexScope },
    changes: changesKeys(ns, shard),
  };
}

/** Where an indexed hash is listed while it holds a key: a sorted set, and its member there. */
export interface CatalogEntry {
  key: string;
  member: string;
}

/** The catalog slice of `shard`'s state scopes (see stateKeys). */
export function scopeCatalogKey(ns: string, shard: number): string {
  return `${shardPrefix(ns, shard)}:scopes`;
}

/**
 * The entries of `redisKv`. They share one hash tag, so that a write and the index that
 * `list` reads change in one script; the KV store lives on one cluster node.
 */
export function kvKeys(ns: string): IndexedHashKeys {
  return { values: `${ns}:{${ns}:kv}:values`, index: `${ns}:{${ns}:kv}:keys` };
}

/**
 * The key that says the namespace is there: the layout version, written as a store opens
 * (`create: false` reads it). A key of its own, without a hash tag: one slot, whatever the
 * cluster.
 */
export function markerKey(ns: string): string {
  return `${ns}:schema_version`;
}

/** A `SCAN MATCH` pattern for every key of the namespace (namespaces are `[a-z0-9_]`). */
export function namespacePattern(ns: string): string {
  return `${ns}:*`;
}
