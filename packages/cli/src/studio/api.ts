/**
 * The studio's JSON API under `/api/`: each read answers what the `ckpt` command prints with
 * `--json` (the same functions make both), and each change what the command answers; the
 * package README lists the routes.
 */
import type { IncomingMessage } from 'node:http';
import { type CheckpointStore, CkptError, type JsonValue, type Page } from '@ckpt/core';
import {
  checkpointDiff,
  existingSession,
  sessionsPage,
  showCheckpoint,
  timeline,
  transcriptPage,
} from '../reads.js';
import { sessionById } from '../session-ref.js';
import { BadTag, type Tags, tagsOf } from '../tag-pairs.js';
import { VERSION } from '../version.js';
import {
  deleteSession,
  deleteState,
  forkSession,
  pruneSession,
  rollbackSession,
  setState,
} from '../writes.js';
import { StudioError } from './errors.js';
import type { LiveTarget } from './live.js';
import type { SessionTrees } from './session-trees.js';
import { topologyOf } from './topology.js';

/** What the studio's page learns about the studio itself: never the store's URL. */
export interface StudioInfo {
  /** The backend's name, such as `sqlite` or `postgres`. */
  backend: string;
  /** Whether changes are allowed (`--write`). */
  write: boolean;
  version: string;
}

/** One API request, as a route sees it. */
export interface ApiCall {
  method: string;
  /** The path after `/api/`, split at `/` and decoded. */
  segments: string[];
  query: URLSearchParams;
  /** The request's JSON body (an object; `{}` when empty). */
  body(): Promise<Record<string, unknown>>;
}

/** What a route answers: a JSON value, or an event stream. */
export type ApiAnswer = { json: unknown; status?: number } | { live: LiveTarget };

/** What the routes work with. */
export interface ApiContext {
  store: CheckpointStore;
  write: boolean;
  trees: SessionTrees;
}

/** The largest request body taken, in bytes. */
export const MAX_BODY_BYTES = 16 * 1024 * 1024;

/** Read a request's body as a JSON object. */
export async function readJsonBody(req: IncomingMessage): Promise<Record<string, unknown>> {
  const chunks: Buffer[] = [];
  let size = 0;
  for await (const chunk of req as AsyncIterable<Buffer>) {
    size += chunk.length;
    if (size > MAX_BODY_BYTES) {
      throw new StudioError(
        413,
        'PAYLOAD_TOO_LARGE',
        `the request body is over ${MAX_BODY_BYTES} bytes; nothing was changed.`,
      );
    }
    chunks.push(chunk);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (text.trim() === '') return {};
  let value: unknown;
  try {
    value = JSON.parse(text);
  } catch {
    throw new CkptError('INVALID_ARGUMENT', 'the request body is not JSON; nothing was changed.', {
      details: { argument: 'body' },
    });
  }
  if (typeof value !== 'object' || value === null || Array.isArray(value)) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      'the request body must be a JSON object, such as {"seq":3}; nothing was changed.',
      { details: { argument: 'body' } },
    );
  }
  return value as Record<string, unknown>;
}

/** A whole number from 1 up, or INVALID_ARGUMENT naming `name`. */
function wholeNumber(name: string, value: unknown): number {
  const n = typeof value === 'string' && /^\d+$/.test(value) ? Number(value) : value;
  if (typeof n !== 'number' || !Number.isSafeInteger(n) || n < 1) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `${name} must be a whole number from 1 up, got ${JSON.stringify(value)}; nothing was changed.`,
      { details: { argument: name } },
    );
  }
  return n;
}

/** An optional whole number from a query string or body. */
function optionalNumber(name: string, value: unknown): number | undefined {
  return value === undefined || value === null ? undefined : wholeNumber(name, value);
}

/** An optional string from a body. */
function optionalString(name: string, value: unknown): string | undefined {
  if (value === undefined || value === null) return undefined;
  if (typeof value !== 'string') {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `${name} must be a string, got ${JSON.stringify(value)}; nothing was changed.`,
      { details: { argument: name } },
    );
  }
  return value;
}

/** The most checkpoints whose details one request asks for. */
const MAX_DETAILS = 1000;

/** The seqs of `?seqs=1,2,3`. */
function seqList(value: string | null): number[] {
  const seqs = (value ?? '').split(',');
  if (seqs.length > MAX_DETAILS) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `seqs names ${seqs.length} checkpoints; ask for ${MAX_DETAILS} at most at a time.`,
      { details: { argument: 'seqs' } },
    );
  }
  return seqs.map((seq) => wholeNumber('seqs', seq));
}

/**
 * The tags of `?where=user%3Dann&where=status%3Dopen` (`{}` without any), checked, keys
 * ascending (so that one filter is one live target, whatever the order it came in).
 */
function whereOf(query: URLSearchParams): Tags {
  try {
    const given = tagsOf(query.getAll('where'));
    return Object.fromEntries(
      Object.keys(given)
        .sort()
        .map((key) => [key, given[key]!]),
    );
  } catch (err) {
    if (!(err instanceof BadTag)) throw err;
    throw new CkptError('INVALID_ARGUMENT', `where: ${err.message}`, {
      details: { argument: 'where' },
    });
  }
}

/** The paging of a listing, from `?limit=&cursor=`. */
function paging(query: URLSearchParams): { limit?: number; cursor: string | null } {
  return {
    limit: optionalNumber('limit', query.get('limit') ?? undefined),
    cursor: query.get('cursor'),
  };
}

/** A page of state keys with their values (`/api/state/<scope>/entries`). */
async function stateEntries(
  store: CheckpointStore,
  scope: string,
  query: URLSearchParams,
): Promise<Page<{ key: string; value: JsonValue }>> {
  const state = store.state(scope);
  const keys = await state.keys({ ...paging(query), prefix: query.get('prefix') ?? undefined });
  const values = await Promise.all(keys.items.map((key) => state.get(key)));
  const items = keys.items
    .map((key, i) => ({ key, value: values[i] }))
    .filter((e): e is { key: string; value: JsonValue } => e.value !== undefined);
  return { items, cursor: keys.cursor };
}

/** Refuse a change when the studio was started without `--write`. */
export function writable(ctx: ApiContext): void {
  if (!ctx.write) {
    throw new StudioError(
      403,
      'FORBIDDEN',
      'this studio is read-only; start it with ckpt studio --write to make changes. Nothing was changed.',
    );
  }
}

/** Answer one API call. */
export async function route(call: ApiCall, ctx: ApiContext): Promise<ApiAnswer> {
  const { method, segments: s, query } = call;
  const { store } = ctx;
  const is = (m: string, ...shape: (string | null)[]) =>
    method === m &&
    s.length === shape.length &&
    shape.every((part, i) => part === null || part === s[i]);
  // A change is refused before its body is read or anything is looked up.
  if (method !== 'GET' && method !== 'HEAD') writable(ctx);

  if (is('GET', 'studio')) {
    const info: StudioInfo = { backend: store.backendName, write: ctx.write, version: VERSION };
    return { json: info };
  }
  if (is('GET', 'events')) {
    const session = query.get('session');
    return {
      live:
        session === null
          ? { kind: 'catalog', prefix: query.get('prefix') ?? '', where: whereOf(query) }
          : { kind: 'session', sessionId: session },
    };
  }
  if (is('GET', 'sessions')) {
    return {
      json: await sessionsPage(store, {
        ...paging(query),
        prefix: query.get('prefix') ?? undefined,
        where: whereOf(query),
      }),
    };
  }
  if (s[0] === 'sessions' && s.length >= 2) {
    const id = s[1]!;
    const ref = sessionById(id);
    if (is('GET', 'sessions', null)) {
      return {
        json: await showCheckpoint(
          store,
          ref,
          optionalNumber('seq', query.get('seq') ?? undefined),
        ),
      };
    }
    if (is('DELETE', 'sessions', null)) {
      await existingSession(store, ref);
      return { json: await deleteSession(store, id) };
    }
    if (is('GET', 'sessions', null, 'tree')) return { json: await ctx.trees.tree(ref) };
    if (is('GET', 'sessions', null, 'topology')) {
      return { json: topologyOf(await ctx.trees.tree(ref)) };
    }
    if (is('GET', 'sessions', null, 'checkpoints')) {
      return { json: await ctx.trees.details(ref, seqList(query.get('seqs'))) };
    }
    if (is('GET', 'sessions', null, 'history')) return { json: await timeline(store, ref) };
    if (is('GET', 'sessions', null, 'transcript')) {
      return { json: await transcriptPage(store, ref, paging(query)) };
    }
    if (is('GET', 'sessions', null, 'diff')) {
      const to = wholeNumber('to', query.get('to') ?? undefined);
      const from = optionalNumber('from', query.get('from') ?? undefined);
      return { json: await checkpointDiff(store, ref, to, from) };
    }
    if (is('POST', 'sessions', null, 'rollback')) {
      const body = await call.body();
      const seq = wholeNumber('seq', body.seq);
      const expectedHead = optionalNumber('expectedHead', body.expectedHead);
      return { json: await rollbackSession(store, id, seq, expectedHead) };
    }
    if (is('POST', 'sessions', null, 'fork')) {
      const body = await call.body();
      const atSeq = optionalNumber('atSeq', body.atSeq);
      const newId = optionalString('newId', body.newId);
      return { json: await forkSession(store, id, { atSeq, newId: newId || undefined }) };
    }
    if (is('POST', 'sessions', null, 'prune')) {
      const body = await call.body();
      return {
        json: await pruneSession(store, id, { keepLast: wholeNumber('keepLast', body.keepLast) }),
      };
    }
  }
  if (is('GET', 'state')) return { json: await store.stateScopes(paging(query)) };
  if (s[0] === 'state' && s.length >= 3) {
    const scope = s[1]!;
    if (is('GET', 'state', null, 'keys')) {
      return {
        json: await store
          .state(scope)
          .keys({ ...paging(query), prefix: query.get('prefix') ?? undefined }),
      };
    }
    if (is('GET', 'state', null, 'entries'))
      return { json: await stateEntries(store, scope, query) };
    const key = s[3]!;
    if (is('GET', 'state', null, 'keys', null)) {
      const value = await store.state(scope).get(key);
      if (value === undefined) {
        throw new CkptError(
          'NOT_FOUND',
          `state ${JSON.stringify(scope)} has no key ${JSON.stringify(key)}.`,
          { details: { argument: 'key' } },
        );
      }
      return { json: value };
    }
    if (is('POST', 'state', null, 'keys', null)) {
      const body = await call.body();
      if (!('value' in body)) {
        throw new CkptError(
          'INVALID_ARGUMENT',
          'setting a state value needs a body {"value": <JSON>}; nothing was changed.',
          { details: { argument: 'value' } },
        );
      }
      return { json: await setState(store, scope, key, body.value as JsonValue) };
    }
    if (is('DELETE', 'state', null, 'keys', null)) {
      return { json: await deleteState(store, scope, key) };
    }
  }
  throw new StudioError(
    404,
    'NOT_FOUND',
    `the studio's API has no ${method} /api/${s.map(encodeURIComponent).join('/')}; the @ckpt/cli README lists its routes.`,
  );
}
