/**
 * `CkptSession`: the OpenAI Agents SDK's `Session` on a ckpt `CheckpointStore`, with the
 * SDK's atomic, idempotent `applyHistoryTransaction`. Each conversation is one ckpt session;
 * see history.ts for how its items are kept.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  type CheckpointStore,
  CkptError,
  checkTags,
  isCkptError,
  type JsonValue,
  MAX_NEEDS,
  type StateScope,
  useStore,
} from '@ckpt/core';
import type {
  AgentInputItem,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from '@openai/agents-core';
import { dropMarkers, newestItems } from './history.js';

/** Options of a `CkptSession`. */
export interface CkptSessionOptions {
  /** The conversation's id, which is the ckpt session's; a random UUID when omitted. */
  sessionId?: string;
  /** The state scope that run states are saved in. Default `openai-agents`. */
  scope?: string;
  /**
   * The conversation's tags, such as `{ user: 'ann', agent: 'support' }`, written with its
   * first checkpoint: the session that creates the conversation gives it its tags, and a later
   * session on it with other tags leaves them (change them with `store.setTags`). Find
   * conversations by them with `store.sessions({ where })`. On a store with tags (ckpt's
   * `tags` capability); elsewhere a change is UNSUPPORTED, before anything is written.
   */
  tags?: Record<string, string>;
}

const OPTIONS = [
  'sessionId',
  'scope',
  'tags',
] as const satisfies readonly (keyof CkptSessionOptions)[];

function invalidOptions(message: string, argument: string): CkptError {
  return new CkptError('INVALID_ARGUMENT', message, { details: { argument } });
}

/**
 * Refuse, before anything is opened, options that are not an object, that name an unknown
 * option (a misspelt `sessionid` would otherwise give a random session id), or whose `tags` are
 * not of the form core takes (checked here too, as core checks them only on the conversation's
 * first checkpoint).
 */
function checkOptions(options: unknown): void {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw invalidOptions(
      `CkptSession options must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}.`,
      'options',
    );
  }
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && !(OPTIONS as readonly string[]).includes(key)) {
      throw invalidOptions(
        `CkptSession options has no option ${JSON.stringify(key)}; the options are ${OPTIONS.join(', ')}.`,
        'options',
      );
    }
  }
  const tags = (options as CkptSessionOptions).tags;
  // Checked here, not only when the conversation is first written: a typo shows at once.
  if (tags !== undefined) checkTags(tags, 'options.tags');
}

/** What each checkpoint of the history records about the change it made. */
interface Change {
  op: 'add' | 'pop' | 'append' | 'replace';
  /** For a transaction: the digest of what it did, to tell a retry from a reuse of its id. */
  digest?: string;
}

/**
 * The version of the layout this package writes, in each checkpoint's metadata (`layout`): from
 * version 2, each checkpoint needs the one it was written on, so that whatever prunes keeps
 * the conversation whole. A checkpoint without it was written before that was so.
 */
export const LAYOUT = 2;

/** The head a change is written on, and what the change's checkpoint needs there. */
interface Head {
  seq: number | null;
  needs: number[];
}

/** How often a change is tried again when another writer moved the history under it. */
const ATTEMPTS = 50;
const DEFAULT_SCOPE = 'openai-agents';

/** The OpenAI Agents SDK's session on a ckpt store (or a store URL, as `openStore` takes). */
export class CkptSession implements SessionHistoryTransactionAwareSession {
  readonly #store: Promise<CheckpointStore>;
  readonly #ownsStore: boolean;
  readonly #sessionId: string;
  readonly #scope: string;
  readonly #tags: Record<string, string> | undefined;
  /** The head as this session last wrote or read it; undefined: read it before writing. */
  #head: Head | undefined;
  /** The changes of this session object, one after another (see #changeOnHead). */
  #changes: Promise<unknown> = Promise.resolve();

  constructor(store: CheckpointStore | string, options: CkptSessionOptions = {}) {
    checkOptions(options);
    ({ store: this.#store, opened: this.#ownsStore } = useStore(store, 'CkptSession'));
    this.#sessionId = options.sessionId ?? randomUUID();
    this.#scope = options.scope ?? DEFAULT_SCOPE;
    this.#tags = options.tags;
  }

  /** A session on the store at `url` (see `openStore`), opened and ready; `close()` closes it. */
  static async open(url: string, options?: CkptSessionOptions): Promise<CkptSession> {
    const session = new CkptSession(url, options);
    await session.#store;
    return session;
  }

  /** The store under the session. */
  get store(): Promise<CheckpointStore> {
    return this.#store;
  }

  async getSessionId(): Promise<string> {
    return this.#sessionId;
  }

  /** The newest `limit` items (every item when omitted), oldest first. */
  async getItems(limit?: number): Promise<AgentInputItem[]> {
    const store = await this.#store;
    return (await newestItems(store, this.#sessionId, limit)) as unknown as AgentInputItem[];
  }

  async addItems(items: AgentInputItem[]): Promise<void> {
    if (items.length === 0) return;
    const store = await this.#store;
    await this.#changeOnHead(store, async (head) => {
      await this.#write(store, head, change({ op: 'add' }), items as unknown as JsonValue[]);
      return { result: undefined };
    });
  }

  /**
   * Remove the newest item from the history and return it. The history before the pop stays
   * in the session's ckpt history (a rollback of the pop's checkpoint brings the item back).
   */
  async popItem(): Promise<AgentInputItem | undefined> {
    const store = await this.#store;
    return this.#changeOnHead(store, async (head) => {
      const [last] = await newestItems(store, this.#sessionId, 1);
      if (last === undefined) return { result: undefined };
      await this.#write(store, head, change({ op: 'pop' }), dropMarkers(1));
      return { result: last as unknown as AgentInputItem };
    });
  }

  /** Delete the conversation: every item, every earlier history, and its saved run state. */
  async clearSession(): Promise<void> {
    const store = await this.#store;
    await store.delete(this.#sessionId);
    this.#head = undefined;
    await this.#runStates(store).delete(this.#sessionId);
  }

  /**
   * Apply `append_items` or `replace_suffix` atomically: the change and its `operationId` are
   * one checkpoint. A retry with the same id and transaction changes nothing; the same id
   * with another transaction, or a suffix that no longer matches, fails and changes nothing.
   */
  async applyHistoryTransaction(args: SessionHistoryTransactionArgs): Promise<void> {
    const { operationId, transaction } = checkTransaction(args);
    const store = await this.#store;
    const key = operationKey(operationId);
    const digest = digestOf(transaction);
    const earlier = await store.loadByKey(this.#sessionId, key);
    if (earlier !== null) return sameOperation(earlier.data, digest);

    if (transaction.type === 'append_items') {
      return this.#changeOnHead(store, async (head) => {
        const items = transaction.items as unknown as JsonValue[];
        const written = await this.#write(
          store,
          head,
          change({ op: 'append', digest }),
          items,
          key,
        );
        return { result: sameOperation(written.data, digest) };
      });
    }
    const { expectedSuffix, replacement } = transaction;
    await this.#changeOnHead(store, async (head) => {
      const actual = await newestItems(store, this.#sessionId, expectedSuffix.length);
      if (
        actual.length !== expectedSuffix.length ||
        digestOf(actual) !== digestOf(expectedSuffix)
      ) {
        throw new CkptError(
          'CONFLICT',
          'Session history suffix no longer matches the transaction precondition; nothing was changed.',
          { details: { argument: 'expectedSuffix' } },
        );
      }
      const items = [
        ...dropMarkers(expectedSuffix.length),
        ...(replacement as unknown as JsonValue[]),
      ];
      const written = await this.#write(store, head, change({ op: 'replace', digest }), items, key);
      sameOperation(written.data, digest);
      return { result: undefined };
    });
  }

  /**
   * Save a run's state (a `RunState`, or its `toString()` text) beside the history, for a run
   * interrupted for approval to be resumed in another process with `RunState.fromString`.
   */
  async saveRunState(state: { toString(): string } | string): Promise<void> {
    const store = await this.#store;
    await this.#runStates(store).set(this.#sessionId, String(state));
  }

  /** The text of the run state last saved, or undefined. */
  async loadRunState(): Promise<string | undefined> {
    const store = await this.#store;
    const saved = await this.#runStates(store).get(this.#sessionId);
    return typeof saved === 'string' ? saved : undefined;
  }

  /** Remove the saved run state; false when there was none. */
  async clearRunState(): Promise<boolean> {
    const store = await this.#store;
    return this.#runStates(store).delete(this.#sessionId);
  }

  /** Close the store, when the session opened it from a URL; a store it was given stays open. */
  async close(): Promise<void> {
    if (this.#ownsStore) await (await this.#store).close();
  }

  #runStates(store: CheckpointStore): StateScope {
    return store.state(this.#scope);
  }

  /**
   * Run `attempt` on the head it is given until no other writer moved the head under it. The
   * changes of one session object run one after another, so that its own calls never race
   * each other for the head: only other objects and processes do.
   */
  #changeOnHead<T>(
    store: CheckpointStore,
    attempt: (head: Head) => Promise<{ result: T }>,
  ): Promise<T> {
    const run = async () => {
      for (let tries = 1; ; tries++) {
        const head = this.#head ?? (await this.#readHead(store));
        try {
          return (await attempt(head)).result;
        } catch (err) {
          this.#head = undefined;
          const moved = isCkptError(err, 'CONFLICT') && err.details?.argument === 'expectedHead';
          if (!moved || tries >= ATTEMPTS) throw err;
          await backoff(tries);
        }
      }
    };
    const change = this.#changes.then(run);
    this.#changes = change.catch(() => {});
    return change;
  }

  /**
   * The head, and what a checkpoint written on it needs: the head itself, or, on a conversation
   * whose head was written before layout 2 (whose checkpoints need nothing), its whole timeline,
   * the newest MAX_NEEDS of it.
   */
  async #readHead(store: CheckpointStore): Promise<Head> {
    const info = await store.info(this.#sessionId);
    if (info === null) return { seq: null, needs: [] };
    if (info.metadata.layout === LAYOUT) return { seq: info.head, needs: [info.head] };
    return { seq: info.head, needs: (await store.history(this.#sessionId)).slice(-MAX_NEEDS) };
  }

  /**
   * Write one change on `head` (expected, so that no other writer's checkpoint comes between
   * it and the one it needs); `idempotencyKey` for a transaction, whose retry may find the
   * checkpoint an earlier try wrote instead.
   */
  async #write(
    store: CheckpointStore,
    head: Head,
    data: JsonValue,
    transcript: JsonValue[],
    idempotencyKey?: string,
  ) {
    if (this.#tags !== undefined && !store.capabilities.tags) {
      throw new CkptError(
        'UNSUPPORTED',
        `CkptSession's tags option needs a store with tags (the 'tags' capability); the ${store.backendName} backend has none. Leave the option out on it.`,
        { details: { capability: 'tags' } },
      );
    }
    // The conversation's first checkpoint carries its tags: on one that exists, tags stay as
    // they are (a session that loses the race to create it writes on the new head, untagged).
    const tags = head.seq === null ? this.#tags : undefined;
    const written = await store.checkpoint(this.#sessionId, data, {
      transcript,
      metadata: { layout: LAYOUT },
      expectedHead: head.seq,
      needs: head.needs,
      ...(idempotencyKey === undefined ? {} : { idempotencyKey }),
      ...(tags === undefined ? {} : { tags }),
    });
    const ours = written.parent === head.seq && written.metadata.layout === LAYOUT;
    this.#head = ours ? { seq: written.seq, needs: [written.seq] } : undefined;
    return written;
  }
}

/** A jittered wait that grows with each attempt, so that contending writers spread out. */
function backoff(attempt: number): Promise<void> {
  const ceiling = Math.min(2 ** attempt, 50);
  return new Promise((resolve) => setTimeout(resolve, Math.random() * ceiling));
}

function change(value: Change): JsonValue {
  return value as unknown as JsonValue;
}

/** Throws unless the checkpoint an operation id wrote is the one `digest` describes. */
function sameOperation(data: JsonValue, digest: string): void {
  const recorded = (data as unknown as Change | null)?.digest;
  if (recorded !== digest) {
    throw new CkptError(
      'CONFLICT',
      'Session history operation was already applied with a different transaction; nothing was changed.',
      { details: { argument: 'operationId' } },
    );
  }
}

/** A stable digest of a JSON-able value (key order as given, as the SDK gives it). */
function digestOf(value: unknown): string {
  return createHash('sha256').update(JSON.stringify(value)).digest('base64url');
}

/** An operation id as an idempotency key: itself, or its digest when it is too long for one. */
function operationKey(operationId: string): string {
  return [...operationId].length <= 200 ? operationId : `sha256:${digestOf(operationId)}`;
}

/** The transaction arguments, checked as the SDK's own sessions check them. */
function checkTransaction(args: SessionHistoryTransactionArgs): SessionHistoryTransactionArgs {
  const invalid = (message: string) =>
    new CkptError('INVALID_ARGUMENT', message, { details: { argument: 'transaction' } });
  if (typeof args?.operationId !== 'string' || args.operationId.trim() === '') {
    throw invalid('Session history transaction operationId must be a non-empty string.');
  }
  const t = args.transaction as {
    type?: unknown;
    items?: unknown;
    expectedSuffix?: unknown;
    replacement?: unknown;
  };
  if (t?.type === 'append_items' && Array.isArray(t.items)) return args;
  if (
    t?.type === 'replace_suffix' &&
    Array.isArray(t.expectedSuffix) &&
    Array.isArray(t.replacement)
  ) {
    return args;
  }
  throw invalid(
    'Session history transaction must be append_items with items, or replace_suffix with expectedSuffix and replacement.',
  );
}
