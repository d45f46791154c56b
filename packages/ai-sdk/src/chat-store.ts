/**
 * `CkptChatStore`: the AI SDK's chats (`UIMessage[]`) on a ckpt `CheckpointStore`, as trees.
 * A chat is one ckpt session; each save is one checkpoint whose transcript holds the messages
 * it adds; edits and regenerations start new branches and delete nothing. See the package's
 * README for how it plugs into `toUIMessageStream` and `useChat`.
 */
import {
  type CheckpointStore,
  CkptError,
  isCkptError,
  type Page,
  type PageOptions,
  type SessionInfo,
  type StateScope,
  useStore,
} from '@ckpt/core';
import { createIdGenerator, type UIMessage } from 'ai';
import { type ApprovalDecision, readDecisions, recordDecisions } from './approvals.js';
import { readBranch, walkBranch } from './branch.js';
import { chatIdOf, checkUserId, prefixOf, sessionIdOf } from './chat-ids.js';
import { type ChatTags, userTagsOf, withUserTags } from './chat-tags.js';
import { readMetadata } from './checkpoints.js';
import { tagEarlierChats } from './earlier-chats.js';
import {
  type InvalidMessagePolicy,
  type MessageRules,
  type MessageSchemas,
  present,
} from './presenting.js';
import type { StoredMessage } from './records.js';
import { type ChatRequest, historyFor } from './request.js';
import type { SaveContext } from './save-plan.js';
import { type SaveResult, saveMessages, writeTitle } from './saving.js';
import { activeStream, endStream, startStream } from './streams.js';
import { treeShape, treeWithMessages, unknownMessage } from './tree.js';

/** Every option a `CkptChatStore` takes: a misspelt one would otherwise be ignored. */
const OPTIONS = [
  'userId',
  'version',
  'upgrades',
  'onInvalid',
  'placeholder',
  'scope',
  'tools',
  'metadataSchema',
  'dataSchemas',
] as const satisfies readonly (keyof CkptChatStoreOptions)[];

/** `options` as given, refused with INVALID_ARGUMENT when not an object or naming an unknown option. */
function checkChatStoreOptions<T extends object>(options: T | null): T {
  if (typeof options !== 'object' || options === null || Array.isArray(options)) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `CkptChatStore options must be an object, got ${options === null ? 'null' : Array.isArray(options) ? 'an array' : typeof options}.`,
      { details: { argument: 'options' } },
    );
  }
  for (const [key, value] of Object.entries(options)) {
    if (value !== undefined && !(OPTIONS as readonly string[]).includes(key)) {
      throw new CkptError(
        'INVALID_ARGUMENT',
        `CkptChatStore options has no option ${JSON.stringify(key)}; the options are ${OPTIONS.join(', ')}.`,
        { details: { argument: 'options' } },
      );
    }
  }
  return options;
}

/** Options of a `CkptChatStore`. */
export interface CkptChatStoreOptions<UI_MESSAGE extends UIMessage = UIMessage>
  extends MessageSchemas<UI_MESSAGE> {
  /**
   * The user whose chats these are. Each chat is then the session `${userId}/${chatId}`, tagged
   * `user: userId` on a store with tags, and `list()` gives this user's chats only. No `/` in
   * it. See also `forUser`.
   */
  userId?: string;
  /** The application's message schema version, recorded with each saved message. Default 1. */
  version?: number;
  /** `upgrades[v]` turns a message saved under version `v` into one of version `v + 1`. */
  upgrades?: Record<number, (message: UIMessage) => UIMessage>;
  /** What `load` does with a message that still fails after its upgrades. Default `'drop-part'`. */
  onInvalid?: InvalidMessagePolicy<UI_MESSAGE>;
  /** The text of the placeholder shown for a message that cannot be loaded. */
  placeholder?: string;
  /**
   * The prefix of the state scopes that approvals, stream ids and the users whose chats saved
   * before tags are tagged are kept in. Default `ai-sdk`.
   */
  scope?: string;
}

/** A chat in the chat list. */
export interface ChatSummary {
  chatId: string;
  /** The application's title, else the text of the chat's first user message; null when none. */
  title: string | null;
  /** How many messages the active branch holds. */
  messageCount: number;
  createdAt: Date;
  /** The last save, branch switch or title change. */
  updatedAt: Date;
  /** Its tags (`{}` when none): the application's (`setTags`), and `user` for a user's chat. */
  tags: ChatTags;
}

/** A page of the chat list: `limit` and `cursor` as `store.sessions` takes them, and `where`. */
export interface ChatListOptions extends PageOptions {
  /**
   * Only the chats that have every one of these tags, such as `{ status: 'open' }` (given with
   * `setTags`). On a store with tags.
   */
  where?: ChatTags;
}

/** What `chats.watch()` gives: the active branch after each change, once it holds its place. */
export interface ChatChanges<UI_MESSAGE extends UIMessage = UIMessage>
  extends AsyncIterable<UI_MESSAGE[]> {
  /** Resolves once every change committed from then on is among what it gives. */
  readonly ready: Promise<void>;
}

/** A page of a chat's messages, oldest first. */
export interface MessagePage<UI_MESSAGE extends UIMessage = UIMessage> {
  messages: UI_MESSAGE[];
  /** Pass as `before` for the page of older messages; null when there are none. */
  before: string | null;
}

/** A chat's every branch, in the shape assistant-ui's `ThreadHistoryAdapter.load()` returns. */
export interface ChatTree<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The newest message of the active branch; null for an empty chat. */
  headId: string | null;
  /** Every message of every branch, each after its parent. */
  messages: { message: UI_MESSAGE; parentId: string | null }[];
}

const DEFAULT_SCOPE = 'ai-sdk';
const DEFAULT_PLACEHOLDER = '[This message could not be loaded.]';
const DEFAULT_PAGE = 50;
const MAX_PAGE = 1000;

/** What a chat store shares with those `forUser` makes of it. */
interface Shared {
  store: Promise<CheckpointStore>;
  /** The users whose chats saved before tags this process is tagging now. */
  tagging: Map<string, Promise<void>>;
}

/** The AI SDK's chats on a ckpt store (or a store URL, as `openStore` takes). */
export class CkptChatStore<UI_MESSAGE extends UIMessage = UIMessage> {
  readonly #store: Promise<CheckpointStore>;
  readonly #ownsStore: boolean;
  readonly #tagging: Map<string, Promise<void>>;
  readonly #options: CkptChatStoreOptions<UI_MESSAGE>;
  readonly #userId: string | undefined;
  readonly #rules: MessageRules<UI_MESSAGE>;
  readonly #scope: string;

  /**
   * A server-side id for each assistant message, for `toUIMessageStream({ generateMessageId })`:
   * ids that are stable before the message is stored.
   */
  readonly generateMessageId: () => string = createIdGenerator({ prefix: 'msg', size: 16 });

  constructor(
    store: CheckpointStore | string,
    options: CkptChatStoreOptions<UI_MESSAGE> = {},
    /** @internal For `forUser`: what the chat store it was made from shares; its store stays open. */
    shared?: Shared,
  ) {
    this.#options = checkChatStoreOptions(options);
    this.#userId = options.userId === undefined ? undefined : checkUserId(options.userId);
    this.#rules = checkRules(options);
    this.#scope = checkScope(options.scope);
    ({ store: this.#store, opened: this.#ownsStore } =
      shared === undefined
        ? useStore(store, 'CkptChatStore')
        : { store: shared.store, opened: false });
    this.#tagging = shared?.tagging ?? new Map();
  }

  /** A chat store on the store at `url` (see `openStore`), opened and ready; `close()` closes it. */
  static async open<UI_MESSAGE extends UIMessage = UIMessage>(
    url: string,
    options?: CkptChatStoreOptions<UI_MESSAGE>,
  ): Promise<CkptChatStore<UI_MESSAGE>> {
    const chats = new CkptChatStore<UI_MESSAGE>(url, options);
    await chats.#store;
    return chats;
  }

  /** The store under the chats. */
  get store(): Promise<CheckpointStore> {
    return this.#store;
  }

  /**
   * The chats of `userId`, on the same store with the same options. Closing it leaves the
   * store open.
   */
  forUser(userId: string): CkptChatStore<UI_MESSAGE> {
    return new CkptChatStore<UI_MESSAGE>(
      '',
      { ...this.#options, userId },
      { store: this.#store, tagging: this.#tagging },
    );
  }

  /**
   * The chat's active branch, ready for `useChat({ messages })` and for
   * `toUIMessageStream({ originalMessages })`: each message upgraded, validated and, when it
   * still fails, handled by `onInvalid`. An unknown chat has no messages.
   */
  async load(chatId: string): Promise<UI_MESSAGE[]> {
    const { store, sessionId } = await this.#chat(chatId);
    const [entries, decisions] = await Promise.all([
      readBranch(store, sessionId),
      readDecisions(await this.#approvals(), sessionId),
    ]);
    return present(
      chatId,
      entries.map((e, i) => ({ record: e.record, last: i === entries.length - 1 })),
      this.#rules,
      decisions,
    );
  }

  /**
   * The chat's active branch again each time the chat changes, from any process (another tab's
   * request, another server), as the changes commit: for a route that keeps every open page of
   * the chat current (the README's recipe). A deleted chat gives `[]`. It holds its place from
   * the call; `ready` resolves once it does. Ends when `signal` aborts, when the loop stops, or
   * when the store closes; UNSUPPORTED on a store whose backend has no change log
   * (`store.capabilities.watch`).
   */
  watch(chatId: string, options?: { signal?: AbortSignal }): ChatChanges<UI_MESSAGE> {
    const unknown = Object.keys(options ?? {}).filter((key) => key !== 'signal');
    if (unknown.length > 0) {
      throw new CkptError(
        'INVALID_ARGUMENT',
        `chats.watch() options has no option ${JSON.stringify(unknown[0])}; the only option is signal.`,
        { details: { argument: 'options' } },
      );
    }
    const started = this.#chat(chatId).then(async ({ store, sessionId }) => {
      const changes = store.watch({ sessionId, signal: options?.signal });
      await changes.ready;
      return changes;
    });
    started.catch(() => {});
    const load = () => this.load(chatId);
    return {
      ready: started.then(() => undefined),
      async *[Symbol.asyncIterator]() {
        for await (const change of await started) {
          yield change.kind === 'delete' ? [] : await load();
        }
      },
    };
  }

  /**
   * The history for a request from `useChat` that sends only its last message: the stored
   * active branch, cut where an edit or a regeneration branches, with the request's message.
   * Pass it to the model and as `toUIMessageStream({ originalMessages })`. Decisions on tool
   * approvals that the message carries are recorded first, once: a different decision on one
   * approval is refused with CONFLICT, and no tool runs for it; the same decision again (a
   * retry, as after a crash before the turn was saved) continues the turn.
   */
  async receive(chatId: string, request: ChatRequest<UI_MESSAGE>): Promise<UI_MESSAGE[]> {
    const { store, sessionId } = await this.#chat(chatId);
    return historyFor(
      { store, sessionId, chatId, rules: this.#rules, approvals: await this.#approvals() },
      request,
    );
  }

  /**
   * Save the chat as the caller knows it (the whole list, as `onEnd` gives it): only the
   * messages that are new, or new versions, are stored, in one checkpoint. A retried save of
   * the same messages stores nothing. An edited user message or a new answer to an earlier
   * message starts a new branch; nothing is deleted.
   */
  async save(chatId: string, messages: UI_MESSAGE[]): Promise<SaveResult> {
    return saveMessages(await this.#saveContext(chatId), messages);
  }

  /**
   * A handler for `toUIMessageStream({ onEnd })` that saves the chat when the response ends,
   * and then, with `streamId`, ends that resumable stream.
   */
  onEnd(
    chatId: string,
    options: { streamId?: string } = {},
  ): (event: { messages: UI_MESSAGE[] }) => Promise<void> {
    return async ({ messages }) => {
      try {
        await this.save(chatId, messages);
      } finally {
        if (options.streamId !== undefined) await this.endStream(chatId, options.streamId);
      }
    };
  }

  /**
   * The newest `limit` messages of the active branch (default 50, at most 1000), or those just
   * before message `before`, oldest first: a long chat is read a page at a time.
   */
  async messages(
    chatId: string,
    options: { limit?: number; before?: string } = {},
  ): Promise<MessagePage<UI_MESSAGE>> {
    const limit = checkLimit(options.limit);
    const { store, sessionId } = await this.#chat(chatId);
    // Read beside the messages, not after them.
    const decisions = readDecisions(await this.#approvals(), sessionId);
    decisions.catch(() => {});
    const picked: { record: StoredMessage; last: boolean }[] = [];
    let found = options.before === undefined;
    let more = false;
    let first = true;
    for await (const entry of walkBranch(store, sessionId, limit + 1)) {
      if (entry.shadowed) continue;
      const last = first;
      first = false;
      if (!found) {
        found = entry.record.message.id === options.before;
        continue;
      }
      if (picked.length === limit) {
        more = true;
        break;
      }
      picked.push({ record: entry.record, last });
    }
    if (!found) throw unknownMessage(chatId, options.before!);
    picked.reverse();
    return {
      messages: await present(chatId, picked, this.#rules, await decisions),
      before: more ? picked[0]!.record.message.id : null,
    };
  }

  /** The messages that share `messageId`'s parent, itself included, oldest first. */
  async siblings(chatId: string, messageId: string): Promise<string[]> {
    const { store, sessionId } = await this.#chat(chatId);
    const shape = await treeShape(store, sessionId);
    const siblings = shape?.tree.siblingsOf(messageId) ?? [];
    if (siblings.length === 0) throw unknownMessage(chatId, messageId);
    return siblings;
  }

  /**
   * Make the branch holding `messageId` the active one: the branch last written through it.
   * Nothing is deleted; switching back works the same way.
   */
  async switchBranch(chatId: string, messageId: string): Promise<void> {
    const { store, sessionId } = await this.#chat(chatId);
    for (let attempt = 1; ; attempt++) {
      const shape = await treeShape(store, sessionId);
      const target = shape?.tree.newestHolding(messageId);
      if (shape === null || target === undefined) throw unknownMessage(chatId, messageId);
      if (target === shape.head) return;
      const before = readMetadata((await store.info(sessionId))?.metadata);
      try {
        await store.rollback(sessionId, target, { expectedHead: shape.head });
      } catch (err) {
        if (!isCkptError(err, 'CONFLICT') || attempt >= 10) throw err;
        continue;
      }
      // A title the application chose belongs to the chat, not to the branch it was set on.
      if (before.titleSet && before.title !== null) {
        await writeTitle({ store, sessionId, tags: userTagsOf(store, this.#userId) }, before.title);
      }
      return;
    }
  }

  /**
   * Every message of every branch as `{ headId, messages: [{ message, parentId }] }`, the shape
   * assistant-ui's `ThreadHistoryAdapter.load()` returns, for branch pickers.
   */
  async tree(chatId: string): Promise<ChatTree<UI_MESSAGE>> {
    const { store, sessionId } = await this.#chat(chatId);
    const found = await treeWithMessages(store, sessionId);
    if (found === null) return { headId: null, messages: [] };
    const { tree, head, records } = found;
    const nodes = [...tree.nodes.values()].sort((a, b) => a.order - b.order);
    const parents = tree.parents();
    const decisions = await readDecisions(await this.#approvals(), sessionId);
    const shown = await present(
      chatId,
      nodes.map((node) => ({ record: records.get(node.id)!, last: !parents.has(node.id) })),
      this.#rules,
      decisions,
    );
    const byId = new Map(shown.map((message) => [message.id, message]));
    // A message the policy leaves out hands its children to its parent.
    const parentOf = (id: string | null): string | null => {
      let at = id;
      while (at !== null && !byId.has(at)) at = tree.nodes.get(at)?.parentId ?? null;
      return at;
    };
    return {
      headId: parentOf(tree.tails.get(head) ?? null),
      messages: nodes
        .filter((node) => byId.has(node.id))
        .map((node) => ({ message: byId.get(node.id)!, parentId: parentOf(node.parentId) })),
    };
  }

  /**
   * The chats (of this store's user, when it has one; with every tag of `where`, when given),
   * most recently updated first, a page at a time: pass `cursor` back for the next page. On a
   * store with tags, a user's chats are read through the tag index (`user`); the first listing
   * of a user tags the chats saved before tags, once (see earlier-chats.ts).
   */
  async list(options: ChatListOptions = {}): Promise<Page<ChatSummary>> {
    const store = await this.#store;
    const userTags = userTagsOf(store, this.#userId);
    const prefix = prefixOf(this.#userId);
    const given =
      options?.where === undefined
        ? undefined
        : withUserTags(options.where, this.#userId, userTags, 'where');
    if (userTags !== undefined) await this.#earlierChatsTagged(store, userTags);
    const where = given ?? userTags;
    const query = {
      ...options,
      ...(prefix === undefined ? {} : { prefix }),
      ...(where === undefined ? {} : { where }),
    };
    let sessions: Page<SessionInfo>;
    try {
      sessions = await store.sessions(query);
    } catch (err) {
      // A cursor of the listing by prefix alone, which an earlier version gave (or this one, on
      // the store before it kept tags), goes on as that listing: it holds the same chats.
      if (
        given !== undefined ||
        userTags === undefined ||
        !isCkptError(err, 'INVALID_ARGUMENT') ||
        err.details.argument !== 'cursor'
      ) {
        throw err;
      }
      sessions = await store.sessions({ ...options, prefix });
    }
    return {
      items: sessions.items.map((info) => {
        const meta = readMetadata(info.metadata);
        return {
          chatId: chatIdOf(this.#userId, info.sessionId),
          title: meta.title,
          messageCount: meta.messages,
          createdAt: info.createdAt,
          updatedAt: info.updatedAt,
          tags: info.tags,
        };
      }),
      cursor: sessions.cursor,
    };
  }

  /**
   * Give the chat tags of the application's, such as `{ status: 'open' }`, replacing those it
   * had (`{}` removes them); a user's chat keeps its `user` tag. `list({ where })` finds chats
   * by them. Its messages, title and place in the list stay. A chat that does not exist is
   * NOT_FOUND; a store without tags is UNSUPPORTED.
   */
  async setTags(chatId: string, tags: ChatTags): Promise<void> {
    const { store, sessionId } = await this.#chat(chatId);
    const all = withUserTags(tags, this.#userId, userTagsOf(store, this.#userId), 'tags');
    try {
      await store.setTags(sessionId, all);
    } catch (err) {
      if (!isCkptError(err, 'NOT_FOUND')) throw err;
      throw new CkptError(
        'NOT_FOUND',
        `chat ${JSON.stringify(chatId)} does not exist; save its first message, then set its tags.`,
        { details: { argument: 'chatId' } },
      );
    }
  }

  /**
   * Give the chat a title of the application's, which the chat list shows from now on. A chat
   * that does not exist (no message saved yet) is NOT_FOUND: a title alone makes no chat.
   */
  async setTitle(chatId: string, title: string): Promise<void> {
    if (typeof title !== 'string' || title.trim() === '') {
      throw new CkptError('INVALID_ARGUMENT', 'title must be a non-empty string.', {
        details: { argument: 'title' },
      });
    }
    const { store, sessionId } = await this.#chat(chatId);
    if (!(await writeTitle({ store, sessionId, tags: userTagsOf(store, this.#userId) }, title))) {
      throw new CkptError(
        'NOT_FOUND',
        `chat ${JSON.stringify(chatId)} does not exist; save its first message, then set its title.`,
        { details: { argument: 'chatId' } },
      );
    }
  }

  /**
   * Record a decision on tool approval `approvalId`, once: a different decision on it, from
   * anywhere, is refused with CONFLICT; the same decision again returns the one recorded.
   * `receive` records the decisions a request carries.
   */
  async decideApproval(
    chatId: string,
    decision: { approvalId: string; approved: boolean; reason?: string },
  ): Promise<ApprovalDecision> {
    const { sessionId } = await this.#chat(chatId);
    const [recorded] = await recordDecisions(await this.#approvals(), sessionId, [decision]);
    return recorded!;
  }

  /** The decision recorded on tool approval `approvalId`, or undefined while it is pending. */
  async approval(chatId: string, approvalId: string): Promise<ApprovalDecision | undefined> {
    const { sessionId } = await this.#chat(chatId);
    return (await readDecisions(await this.#approvals(), sessionId)).get(approvalId);
  }

  /**
   * Make `streamId` the chat's active resumable stream, replacing any earlier one; returns the
   * id it replaced, or null.
   */
  async startStream(chatId: string, streamId: string): Promise<string | null> {
    const { sessionId } = await this.#chat(chatId);
    return startStream(await this.#streams(), sessionId, streamId);
  }

  /** The chat's active resumable stream id, or null: what `GET /api/chat/:id/stream` resumes. */
  async activeStream(chatId: string): Promise<string | null> {
    const { sessionId } = await this.#chat(chatId);
    return activeStream(await this.#streams(), sessionId);
  }

  /** Clear the chat's active stream if it is still `streamId`; true when it was. */
  async endStream(chatId: string, streamId: string): Promise<boolean> {
    const { sessionId } = await this.#chat(chatId);
    return endStream(await this.#streams(), sessionId, streamId);
  }

  /** Delete the chat: every branch, its approval decisions and its stream id. False when unknown. */
  async delete(chatId: string): Promise<boolean> {
    const { store, sessionId } = await this.#chat(chatId);
    const deleted = await store.delete(sessionId);
    await (await this.#approvals()).delete(sessionId);
    await (await this.#streams()).delete(sessionId);
    return deleted;
  }

  /** Close the store, when this chat store opened it from a URL; a store it was given stays open. */
  async close(): Promise<void> {
    if (this.#ownsStore) await (await this.#store).close();
  }

  async #chat(chatId: string): Promise<{ store: CheckpointStore; sessionId: string }> {
    const sessionId = sessionIdOf(this.#userId, chatId);
    return { store: await this.#store, sessionId };
  }

  async #saveContext(chatId: string): Promise<SaveContext> {
    const { store, sessionId } = await this.#chat(chatId);
    let decisions: Promise<Map<string, ApprovalDecision>> | undefined;
    return {
      store,
      sessionId,
      version: this.#rules.version,
      edits: new Set(),
      tags: userTagsOf(store, this.#userId),
      shown: async (record, last) => {
        decisions ??= this.#approvals().then((scope) => readDecisions(scope, sessionId));
        const [message] = await present(chatId, [{ record, last }], this.#rules, await decisions);
        return message ?? null;
      },
    };
  }

  /**
   * Once this user's chats saved before tags are tagged (see earlier-chats.ts). Listings of one
   * user at once in a process wait for one tagging; what is done is read from the state scope
   * (one small read a listing), not kept in memory, which would grow with every user listed.
   */
  #earlierChatsTagged(store: CheckpointStore, userTags: ChatTags): Promise<void> {
    const userId = this.#userId!;
    let done = this.#tagging.get(userId);
    if (done === undefined) {
      const marks = store.state(`${this.#scope}.tagged`);
      done = tagEarlierChats(store, marks, userId, prefixOf(userId)!, userTags).finally(() =>
        this.#tagging.delete(userId),
      );
      this.#tagging.set(userId, done);
    }
    return done;
  }

  async #approvals(): Promise<StateScope> {
    return (await this.#store).state(`${this.#scope}.approvals`);
  }

  async #streams(): Promise<StateScope> {
    return (await this.#store).state(`${this.#scope}.streams`);
  }
}

function checkRules<UI_MESSAGE extends UIMessage>(
  options: CkptChatStoreOptions<UI_MESSAGE>,
): MessageRules<UI_MESSAGE> {
  const refuse = (argument: string, message: string) =>
    new CkptError('INVALID_ARGUMENT', message, { details: { argument } });
  const version = options.version ?? 1;
  if (!Number.isInteger(version) || version < 1) {
    throw refuse('version', `version must be a positive integer, got ${JSON.stringify(version)}.`);
  }
  const upgrades = options.upgrades ?? {};
  for (const [key, fn] of Object.entries(upgrades)) {
    const from = Number(key);
    if (!Number.isInteger(from) || from < 1 || from >= version || typeof fn !== 'function') {
      throw refuse(
        'upgrades',
        `upgrades[${key}] must be a function turning a version-${key} message into version ${from + 1}, for versions 1 to ${version - 1}.`,
      );
    }
  }
  const onInvalid = options.onInvalid ?? 'drop-part';
  if (
    typeof onInvalid !== 'function' &&
    onInvalid !== 'drop-part' &&
    onInvalid !== 'placeholder' &&
    onInvalid !== 'throw'
  ) {
    throw refuse(
      'onInvalid',
      `onInvalid must be 'drop-part', 'placeholder', 'throw' or a function, got ${JSON.stringify(onInvalid)}.`,
    );
  }
  const { tools, metadataSchema, dataSchemas } = options;
  const schemas: MessageSchemas<UI_MESSAGE> = {};
  if (tools !== undefined) schemas.tools = tools;
  if (metadataSchema !== undefined) schemas.metadataSchema = metadataSchema;
  if (dataSchemas !== undefined) schemas.dataSchemas = dataSchemas;
  return {
    version,
    upgrades,
    schemas,
    onInvalid,
    placeholder: options.placeholder ?? DEFAULT_PLACEHOLDER,
  };
}

function checkScope(scope: unknown): string {
  if (scope === undefined) return DEFAULT_SCOPE;
  if (typeof scope !== 'string' || scope === '') {
    throw new CkptError('INVALID_ARGUMENT', 'scope must be a non-empty string.', {
      details: { argument: 'scope' },
    });
  }
  return scope;
}

function checkLimit(limit: unknown): number {
  if (limit === undefined) return DEFAULT_PAGE;
  if (typeof limit !== 'number' || !Number.isInteger(limit) || limit < 1 || limit > MAX_PAGE) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `limit must be an integer from 1 to ${MAX_PAGE}, got ${JSON.stringify(limit)}.`,
      { details: { argument: 'limit' } },
    );
  }
  return limit;
}
