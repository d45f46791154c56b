/**
 * The native Redis backend. Each mutation is one Lua script on the slot of its session; each
 * read is one script or command. Fork is the exception on a cluster, where source and copy
 * may live on different nodes: it reads the source in one script, then publishes the whole
 * copy in one script on the new id's slot (see the README).
 */
import {
  type AdapterOpening,
  type AppendInput,
  type AppendResult,
  afterReady,
  type CheckpointBackend,
  compareSessionsNewestFirst,
  type Diagnosis,
  type ExportedStoredCheckpoint,
  type ForkInput,
  type ForkResult,
  type ImportInput,
  openAdapter,
  type RollbackInput,
  type RollbackResult,
  type SessionPosition,
  type StoredCheckpoint,
  type StoredCheckpointInfo,
  type StoredLineageEntry,
  type StoredSession,
} from '@ckpt/core/adapter';
import { catalogPage } from './catalog.js';
import { connect, disconnect, type RedisOptions } from './connection.js';
import { dropNamespace } from './destroy.js';
import { diagnose } from './diagnose.js';
import { redisErrorHint } from './error-hints.js';
import { IndexedHash } from './indexed-hash.js';
import { findNamespace, markNamespace } from './migrate.js';
import { explained, type RedisClient } from './runner.js';
import {
  catalogKey,
  hex,
  idsKeys,
  type SessionKeys,
  SHARDS,
  scopeCatalogKey,
  sessionKeys,
  stateKeys,
  unhex,
} from './schema.js';
import * as lua from './statements.js';

type Reply = (string | null)[];

/** Milliseconds as the scripts store them: 15 digits, so that text order is time order. */
const padTime = (ms: number) => String(ms).padStart(15, '0');
const seqArg = (seq: number | null | undefined) =>
  seq === null || seq === undefined ? '' : String(seq);

const numberOrNull = (value: string | null | undefined) =>
  value === null || value === undefined ? null : Number(value);

/** A script's reply for a session or seq it did not find: `no_session` or `no_seq`. */
function notFound(status: string | null | undefined) {
  return { status: 'not_found', missing: status === 'no_session' ? 'session' : 'seq' } as const;
}

/** A checkpoint's info text, `<parent> <createdAt> <metadata>`, taken apart. */
function parseInfo(info: string): { parent: number | null; createdAt: number; metadata: string } {
  const first = info.indexOf(' ');
  const second = info.indexOf(' ', first + 1);
  return {
    parent: first === 0 ? null : Number(info.slice(0, first)),
    createdAt: Number(info.slice(first + 1, second)),
    metadata: info.slice(second + 1),
  };
}

function checkpoint(seq: string, info: string, data: string): StoredCheckpoint {
  return { seq: Number(seq), ...parseInfo(info), data };
}

/** A checkpoint's needs as the needs hash holds them, `<seq>,<seq>,…` ('' for none). */
function parseNeeds(list: string): number[] {
  return list === '' ? [] : list.split(',').map(Number);
}

/** One session of the describe script's reply (7 fields), or null when it does not exist. */
function describedSession(sessionId: string, fields: Reply): StoredSession | null {
  const [head, count, fid, fseq, created, updated, headInfo] = fields;
  if (head == null) return null;
  return {
    sessionId,
    head: Number(head),
    checkpoints: Number(count),
    forkedFrom: fid == null ? null : { sessionId: fid, seq: Number(fseq) },
    metadata: headInfo ? parseInfo(headInfo).metadata : '{}',
    createdAt: Number(created),
    updatedAt: Number(updated),
  };
}

/** The Redis backend (see `redis()`). */
export class RedisBackend implements CheckpointBackend {
  readonly name = 'redis';
  readonly capabilities = { concurrentWriters: true, listSessions: true, listStateKeys: true };
  readonly namespace: string;
  /** The client commands run on. */
  readonly client: RedisClient;
  readonly #opening: AdapterOpening<void>;

  constructor(options: RedisOptions) {
    const connection = connect(options);
    const { client, namespace, existing } = connection;
    this.client = client;
    this.namespace = namespace;
    // A marker that could not be written now is written by the next store that opens; the
    // calls report a connection that fails them. A client quit under the marker on its way
    // would drop it, and leave a store that was opened and never written not found by
    // `create: false`: close waits for it.
    this.#opening = openAdapter(
      () =>
        existing ? findNamespace(client, namespace, existing) : markNamespace(client, namespace),
      () => disconnect(connection),
    );
    // With create: false nothing may reach the namespace before it is found: a write would
    // make a store where there was none.
    // biome-ignore lint/correctness/noConstructorReturn: this same instance, its calls held back
    if (existing) return afterReady(this, this.#opening.migrated);
  }

  /**
   * Resolves once the namespace is marked as a store (or, with `create: false`, found);
   * rejects with NOT_FOUND when `create: false` found nothing of it.
   */
  ready(): Promise<void> {
    return this.#opening.ready();
  }

  #keys(sessionId: string): SessionKeys {
    return sessionKeys(this.namespace, sessionId);
  }

  async append(input: AppendInput): Promise<AppendResult> {
    const k = this.#keys(input.sessionId);
    const [status, seq, third, data] = await lua.append.run<Reply>(
      this.client,
      [k.session, k.info, k.data, k.transcript, k.seqs, k.idempotency, k.catalog, k.needs, k.ids],
      [
        input.data,
        input.metadata,
        input.transcript,
        input.expectedHead === undefined ? '0' : '1',
        seqArg(input.expectedHead),
        input.idempotencyKey === undefined ? '0' : '1',
        input.idempotencyKey ?? '',
        padTime(input.now),
        k.hexId,
        input.needs.join(','),
      ],
    );
    switch (status) {
      case 'written':
        return { status, seq: Number(seq), parent: numberOrNull(third) };
      case 'replayed':
        return {
          status,
          seq: Number(seq),
          checkpoint: third ? checkpoint(seq!, third, data!) : null,
        };
      default:
        // conflict: the head in the second place
        return { status: 'conflict', head: numberOrNull(seq) };
    }
  }

  async load(sessionId: string, seq: number | null): Promise<StoredCheckpoint | null> {
    const k = this.#keys(sessionId);
    if (seq === null) {
      // The session hash keeps a copy of its head (see statements.ts): one command, no script.
      const [head, copied, info, data] = await explained(
        this.client,
        this.client.hmget(k.session, 'head', 'hseq', 'hinfo', 'hdata'),
      );
      if (head == null) return null;
      if (copied === head && info != null && data != null) return checkpoint(head, info, data);
      // A head moved by a version that kept no copy: read it where every checkpoint is.
    }
    const found = await lua.load.run<Reply | null>(
      this.client,
      [k.session, k.info, k.data],
      [seqArg(seq)],
    );
    return found ? checkpoint(found[0]!, found[1]!, found[2]!) : null;
  }

  async loadByKey(sessionId: string, idempotencyKey: string): Promise<StoredCheckpoint | null> {
    const k = this.#keys(sessionId);
    const found = await lua.loadByKey.run<Reply | null>(
      this.client,
      [k.idempotency, k.info, k.data],
      [idempotencyKey],
    );
    return found ? checkpoint(found[0]!, found[1]!, found[2]!) : null;
  }

  async session(sessionId: string): Promise<StoredSession | null> {
    const [described] = await this.#describe([sessionId]);
    return described ?? null;
  }

  /**
   * Describe sessions with one script call per shard: the sessions of a shard share its slot,
   * so a page of 50 sessions costs at most SHARDS calls, not 50. Null for a missing session.
   */
  async #describe(sessionIds: readonly string[]): Promise<(StoredSession | null)[]> {
    const byShard = new Map<string, { at: number; keys: SessionKeys }[]>();
    sessionIds.forEach((sessionId, at) => {
      const keys = this.#keys(sessionId);
      const shard = byShard.get(keys.catalog) ?? [];
      shard.push({ at, keys });
      byShard.set(keys.catalog, shard);
    });
    const described: (StoredSession | null)[] = sessionIds.map(() => null);
    await Promise.all(
      [...byShard.values()].map(async (shard) => {
        const found = await lua.describe.run<Reply>(
          this.client,
          shard.flatMap(({ keys }) => [keys.session, keys.info]),
          [],
        );
        shard.forEach(({ at }, n) => {
          described[at] = describedSession(sessionIds[at]!, found.slice(7 * n, 7 * n + 7));
        });
      }),
    );
    return described;
  }

  async listCheckpoints(
    sessionId: string,
    query: { beforeSeq: number | null; limit: number },
  ): Promise<StoredCheckpointInfo[]> {
    const k = this.#keys(sessionId);
    const pairs = await lua.listCheckpoints.run<string[]>(
      this.client,
      [k.seqs, k.info],
      [seqArg(query.beforeSeq), query.limit],
    );
    const out: StoredCheckpointInfo[] = [];
    for (let n = 0; n < pairs.length; n += 2) {
      out.push({ seq: Number(pairs[n]), ...parseInfo(pairs[n + 1]!) });
    }
    return out;
  }

  async lineage(
    sessionId: string,
    query: { fromSeq: number | null; limit: number; transcript: boolean },
  ): Promise<StoredLineageEntry[]> {
    const k = this.#keys(sessionId);
    const flat = await lua.lineage.run<string[]>(
      this.client,
      [k.session, k.info, k.transcript],
      [seqArg(query.fromSeq), query.limit, query.transcript ? '1' : '0'],
    );
    const width = query.transcript ? 4 : 3;
    const out: StoredLineageEntry[] = [];
    for (let n = 0; n < flat.length; n += width) {
      const entry: StoredLineageEntry = {
        seq: Number(flat[n]),
        parent: flat[n + 1] === '' ? null : Number(flat[n + 1]),
        createdAt: Number(flat[n + 2]),
      };
      if (query.transcript) entry.transcript = flat[n + 3]!;
      out.push(entry);
    }
    return out;
  }

  async rollback(input: RollbackInput): Promise<RollbackResult> {
    const k = this.#keys(input.sessionId);
    const [status, head] = await lua.rollback.run<Reply>(
      this.client,
      [k.session, k.info, k.data, k.catalog],
      [
        String(input.seq),
        input.expectedHead === undefined ? '0' : '1',
        seqArg(input.expectedHead),
        padTime(input.now),
        k.hexId,
      ],
    );
    switch (status) {
      case 'done':
        return { status };
      case 'conflict':
        return { status, head: numberOrNull(head) };
      default:
        return notFound(status);
    }
  }

  async fork(input: ForkInput): Promise<ForkResult> {
    const from = this.#keys(input.sessionId);
    const [status, at, ...chain] = await lua.forkRead.run<Reply>(
      this.client,
      [from.session, from.info, from.data, from.transcript, from.needs],
      [seqArg(input.atSeq)],
    );
    if (status !== 'found') return notFound(status);
    const to = this.#keys(input.newId);
    const published = await lua.forkWrite.run<string>(
      this.client,
      [to.session, to.info, to.data, to.transcript, to.seqs, to.catalog, to.needs, to.ids],
      [padTime(input.now), to.hexId, input.sessionId, at!, ...chain.map((v) => v ?? '')],
    );
    return published === 'done' ? { status: 'done', seq: Number(at) } : { status: 'exists' };
  }

  async prune(sessionId: string, keepLast: number): Promise<number> {
    const k = this.#keys(sessionId);
    return lua.prune.count(
      this.client,
      [k.session, k.info, k.data, k.transcript, k.seqs, k.needs],
      [keepLast],
    );
  }

  async delete(sessionId: string): Promise<boolean> {
    const k = this.#keys(sessionId);
    const deleted = await lua.deleteSession.count(
      this.client,
      [k.session, k.info, k.data, k.transcript, k.seqs, k.idempotency, k.catalog, k.needs, k.ids],
      [k.hexId],
    );
    return deleted === 1;
  }

  /** A page of the catalog (see catalog.ts), then its sessions described; one deleted in between is left out. */
  async sessions(query: {
    after: SessionPosition | null;
    limit: number;
    prefix: string;
  }): Promise<StoredSession[]> {
    const { after, limit, prefix } = query;
    if (prefix !== '') return this.#sessionsWithPrefix(prefix, after, limit);
    const start = after === null ? '+' : `(${padTime(after.updatedAt)}:${hex(after.sessionId)}`;
    const page = await catalogPage(SHARDS, start, limit, (shard, below, count) =>
      explained(
        this.client,
        this.client.zrevrangebylex(
          catalogKey(this.namespace, shard),
          below,
          '-',
          'LIMIT',
          0,
          count,
        ),
      ),
    );
    const described = await this.#describe(
      page.map((member) => unhex(member.slice(member.indexOf(':') + 1))),
    );
    return described.filter((s): s is StoredSession => s !== null);
  }

  /**
   * The sessions whose id starts with `prefix`: from each shard, the ids in the prefix's range
   * of its index (see idsKeys) with their updatedAt, in one script call each; then the page
   * among those, described. Its cost follows the sessions with the prefix, not the catalog.
   */
  async #sessionsWithPrefix(
    prefix: string,
    after: SessionPosition | null,
    limit: number,
  ): Promise<StoredSession[]> {
    // Hex digits sort below `g`: `[hex, hex + g)` is exactly the ids that start with the prefix.
    const range = [`[${hex(prefix)}`, `(${hex(prefix)}g`];
    const found = await Promise.all(
      Array.from({ length: SHARDS }, async (_, shard) => {
        const { ids, built } = idsKeys(this.namespace, shard);
        const catalog = catalogKey(this.namespace, shard);
        const hexIds = await lua.prefixIds.run<string[]>(this.client, [ids, built, catalog], range);
        if (hexIds.length === 0) return [];
        const sessionIds = hexIds.map(unhex);
        const keys = sessionIds.map((id) => this.#keys(id).session);
        const times = await lua.updatedOf.run<Reply>(this.client, keys, []);
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
    const described = await this.#describe(page.map((s) => s.sessionId));
    return described.filter((s): s is StoredSession => s !== null);
  }

  async exportCheckpoints(
    sessionId: string,
    query: { afterSeq: number | null; limit: number },
  ): Promise<ExportedStoredCheckpoint[]> {
    const k = this.#keys(sessionId);
    const flat = await lua.exportCheckpoints.run<string[]>(
      this.client,
      [k.seqs, k.info, k.data, k.transcript, k.needs],
      [seqArg(query.afterSeq), query.limit],
    );
    const out: ExportedStoredCheckpoint[] = [];
    for (let n = 0; n < flat.length; n += 5) {
      out.push({
        ...checkpoint(flat[n]!, flat[n + 1]!, flat[n + 2]!),
        transcript: flat[n + 3]!,
        needs: parseNeeds(flat[n + 4]!),
      });
    }
    return out;
  }

  async importSession(input: ImportInput): Promise<'imported' | 'exists'> {
    const k = this.#keys(input.sessionId);
    const checkpoints = input.checkpoints.flatMap((cp) => [
      String(cp.seq),
      `${seqArg(cp.parent)} ${padTime(cp.createdAt)} ${cp.metadata}`,
      cp.data,
      cp.transcript,
      cp.needs.join(','),
    ]);
    return lua.importSession.run<'imported' | 'exists'>(
      this.client,
      [k.session, k.info, k.data, k.transcript, k.seqs, k.idempotency, k.catalog, k.needs, k.ids],
      [
        input.replace ? '1' : '0',
        k.hexId,
        String(input.head),
        input.forkedFrom?.sessionId ?? '',
        seqArg(input.forkedFrom?.seq),
        padTime(input.createdAt),
        padTime(input.updatedAt),
        ...checkpoints,
      ],
    );
  }

  /** Scopes from every shard's catalog of scopes (see schema.ts), merged in byte order. */
  async stateScopes(query: { after: string | null; limit: number }): Promise<string[]> {
    const min = query.after === null ? '-' : `(${hex(query.after)}`;
    const slices = await Promise.all(
      Array.from({ length: SHARDS }, (_, shard) =>
        explained(
          this.client,
          this.client.zrangebylex(
            scopeCatalogKey(this.namespace, shard),
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

  #state(scope: string): IndexedHash {
    return new IndexedHash(this.client, stateKeys(this.namespace, scope));
  }

  stateGet(scope: string, key: string): Promise<string | undefined> {
    return this.#state(scope).get(key);
  }

  stateSet(scope: string, key: string, value: string): Promise<void> {
    return this.#state(scope).set(key, value);
  }

  stateDelete(scope: string, key: string): Promise<boolean> {
    return this.#state(scope).delete(key);
  }

  stateCompareAndSet(
    scope: string,
    key: string,
    expected: string | null,
    value: string,
  ): Promise<boolean> {
    return this.#state(scope).compareAndSet(key, expected, value);
  }

  stateKeys(
    scope: string,
    query: { prefix: string; after: string | null; limit: number },
  ): Promise<string[]> {
    return this.#state(scope).keys(query.prefix, query.after, query.limit);
  }

  /** The server's persistence and eviction settings, which decide what a resolved call survives. */
  diagnose(): Promise<Diagnosis[]> {
    return diagnose(this.client);
  }

  /** Remove every key of the namespace, the marker and `redisKv`'s included (see destroy.ts). */
  destroy(): Promise<void> {
    return dropNamespace(this.client, this.namespace);
  }

  /** What to do about a refusal of Redis's own (a login it refused). */
  errorHint(err: unknown): string | undefined {
    return redisErrorHint(err);
  }

  close(): Promise<void> {
    return this.#opening.close();
  }
}
