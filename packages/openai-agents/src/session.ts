/**
 * `CkptSession`: the OpenAI Agents SDK's `Session` on a ckpt `CheckpointStore`, with the
 * SDK's atomic, idempotent `applyHistoryTransaction`. Each conversation is one ckpt session;
 * see history.ts for how its items are kept.
 */
import { createHash, randomUUID } from 'node:crypto';
import {
  type CheckpointStore,
  CkptError,
  isCkptError,
  type JsonValue,
  type StateScope,
  useStore,
} from '@ckpt/core';
import type {
  AgentInputItem,
  SessionHistoryTransactionArgs,
  SessionHistoryTransactionAwareSession,
} from '@openai/agents-core';
import { dropMarker, newestItems } from './history.js';

/** Options of a `CkptSession`. */
export interface CkptSessionOptions {
  /** The conversation's id, which is the ckpt session's; a random UUID when omitted. */
  sessionId?: string;
  /** The state scope that run states are saved in. Default `openai-agents`. */
  scope?: string;
}

/** What each checkpoint of the history records about the change it made. */
interface Change {
  op: 'add' | 'pop' | 'append' | 'replace';
  /** For a transaction: the digest of what it did, to tell a retry from a reuse of its id. */
  digest?: string;
}

/** How often a change is tried again when another writer moved the history under it. */
const ATTEMPTS = 20;
const DEFAULT_SCOPE = 'openai-agents';

/** The OpenAI Agents SDK's session on a ckpt store (or a store URL, as `openStore` takes). */
export class CkptSession implements SessionHistoryTransactionAwareSession {
  readonly #store: Promise<CheckpointStore>;
  readonly #ownsStore: boolean;
  readonly #sessionId: string;
  readonly #scope: string;

  constructor(store: CheckpointStore | string, options: CkptSessionOptions = {}) {
    ({ store: this.#store, opened: this.#ownsStore } = useStore(store, 'CkptSession'));
    this.#sessionId = options.sessionId ?? randomUUID();
    this.#scope = options.scope ?? DEFAULT_SCOPE;
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
    await store.checkpoint(this.#sessionId, change({ op: 'add' }), {
      transcript: items as unknown as JsonValue[],
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
      await store.checkpoint(this.#sessionId, change({ op: 'pop' }), {
        transcript: [dropMarker(1)],
        expectedHead: head,
      });
      return { result: last as unknown as AgentInputItem };
    });
  }

  /** Delete the conversation: every item, every earlier history, and its saved run state. */
  async clearSession(): Promise<void> {
    const store = await this.#store;
    await store.delete(this.#sessionId);
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
      const written = await store.checkpoint(this.#sessionId, change({ op: 'append', digest }), {
        transcript: transaction.items as unknown as JsonValue[],
        idempotencyKey: key,
      });
      return sameOperation(written.data, digest);
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
      const written = await store.checkpoint(this.#sessionId, change({ op: 'replace', digest }), {
        transcript: [dropMarker(expectedSuffix.length), ...(replacement as unknown as JsonValue[])],
        expectedHead: head,
        idempotencyKey: key,
      });
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

  /** Run `attempt` on the head it is given until no other writer moved the head under it. */
  async #changeOnHead<T>(
    store: CheckpointStore,
    attempt: (head: number | null) => Promise<{ result: T }>,
  ): Promise<T> {
    for (let tries = 1; ; tries++) {
      const head = await store.head(this.#sessionId);
      try {
        return (await attempt(head)).result;
      } catch (err) {
        const moved = isCkptError(err, 'CONFLICT') && err.details?.argument !== 'expectedSuffix';
        if (!moved || tries >= ATTEMPTS) throw err;
      }
    }
  }
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
