/**
 * Where the messages of a save go. The caller gives the chat as it knows it (the whole list, as
 * `onEnd` gives it); the planner walks the active branch from its newest message back until it
 * meets a message of that list that is stored unchanged (the anchor), so a save reads only the
 * newest few messages however long the chat. What follows the anchor in the list is new:
 *
 * - a new user message goes at the end of the active branch (the server loads the rest);
 * - a new assistant message answers the anchor: at the end when the anchor is the newest
 *   message, else on a new branch after it (a regeneration);
 * - a user message stored with other content is an edit: a new branch after the anchor (the
 *   message before it), under a new id derived from the edited one;
 * - an assistant message stored with other content (a tool's output, an approval answered) is
 *   a new version of it: at the end when it is the newest message, else on a new branch.
 *
 * Nothing is ever deleted. A new branch starts on the checkpoint whose last message is the
 * anchor; when the anchor shares its checkpoint with later messages (a turn holds a question
 * and its answer), the branch starts on that checkpoint's parent and repeats the messages up
 * to the anchor, with their ids, so that each branch reads whole.
 */
import { type Checkpoint, type CheckpointStore, CkptError } from '@ckpt/core';
import type { UIMessage } from 'ai';
import { type BranchEntry, walkBranch } from './branch.js';
import { type ChatTags, missingTags } from './chat-tags.js';
import {
  type ChatMetadata,
  isRoot,
  messageData,
  readMetadata,
  revisionData,
  type SaveData,
  saveKey,
  tailOf,
  titleOf,
} from './checkpoints.js';
import { checkMessage, checkShape } from './message-checks.js';
import { digestOf, type StoredMessage, sameMessage } from './records.js';

/** What a save needs to know about the chat and the application. */
export interface SaveContext {
  store: CheckpointStore;
  sessionId: string;
  /** The application's message schema version, recorded with each new message. */
  version: number;
  /** A stored message as a load shows it (upgraded, validated), to recognise it when it comes back. */
  shown(record: StoredMessage, last: boolean): Promise<UIMessage | null>;
  /** Ids found stored with other content off the active branch: edits, whatever the walk says. */
  edits: Set<string>;
  /** The tags each chat of the store carries (its user's), when the store keeps tags. */
  tags?: ChatTags;
}

/** A checkpoint to write. */
export interface Write {
  /** The head the plan was made on. */
  head: number;
  /** The checkpoint the new one goes on: the head, or, for a new branch, where it starts. */
  on: number;
  /** The metadata of `on`. */
  onMeta: ChatMetadata;
  records: StoredMessage[];
  data: SaveData;
  metadata: ChatMetadata;
  /** The ids of the messages this save adds or revises (not those it repeats). */
  saved: string[];
  /** The chat's tags with the context's added, for a chat that lacks them (saved before tags). */
  tags?: ChatTags;
}

/** What a save does: nothing, create the chat first, or write one checkpoint. */
export type SavePlan = { kind: 'none' } | { kind: 'create' } | ({ kind: 'write' } & Write);

/**
 * The first transcript page a save reads. A turn's save from `onEnd` meets its anchor at the
 * newest stored message, a regeneration at the second: a short page is read fastest, and the
 * walk reads on when it must.
 */
const FIRST_PAGE = 4;

/** The plan for saving `messages` to the chat. */
export async function planSave(ctx: SaveContext, messages: UIMessage[]): Promise<SavePlan> {
  if (!Array.isArray(messages)) throw refuse('messages must be an array of UIMessage.');
  if (messages.length === 0) return { kind: 'none' };
  const { store, sessionId } = ctx;
  const info = await store.info(sessionId);
  if (info === null) {
    // Every message of a new chat is new: all are checked before the chat is created.
    checkMessages(messages, 0);
    return { kind: 'create' };
  }
  const plan = await planOnHead(ctx, messages, info.head, readMetadata(info.metadata));
  const tags = missingTags(ctx.tags, info.tags);
  return plan.kind === 'write' && tags !== undefined ? { ...plan, tags } : plan;
}

/** The plan for saving `messages` to the chat whose head is `head`. */
async function planOnHead(
  ctx: SaveContext,
  messages: UIMessage[],
  head: number,
  headMeta: ChatMetadata,
): Promise<SavePlan> {
  const { store, sessionId } = ctx;
  const atTail = planAtTail(ctx, messages, head, headMeta);
  if (atTail !== undefined) return atTail;

  const walk = walkBranch(store, sessionId, FIRST_PAGE);
  const first = await walk.next();

  const list = new ListIndex(messages);
  const walked = new Set<string>();
  /** Stored messages met in the list with other content, by their place in the list. */
  const changed = new Map<number, BranchEntry>();
  let tail: BranchEntry | undefined;
  let anchor: { entry: BranchEntry; at: number } | undefined;
  for (let step = first; !step.done; step = await walk.next()) {
    const entry = step.value;
    if (entry.shadowed) continue;
    tail ??= entry;
    walked.add(entry.record.message.id);
    const at = list.find(entry.record);
    if (at === undefined) continue;
    // Compared with what is stored, so checked whole first.
    checkMessage(messages[at], `messages[${at}]`);
    if (await isStoredAs(ctx, messages[at]!, entry, entry === tail)) {
      anchor = { entry, at };
      break;
    }
    changed.set(at, entry);
  }

  const start = anchor === undefined ? 0 : anchor.at + 1;
  const incoming = messages.slice(start);
  if (incoming.length === 0) {
    await walk.return(undefined);
    return { kind: 'none' };
  }
  // Only what is stored is checked, so that a save of a long chat's whole list stays cheap.
  checkMessages(incoming, start);
  const firstChanged = changed.get(start);
  const lead = incoming[0]!;
  const kind =
    firstChanged !== undefined
      ? lead.role === 'user'
        ? 'edit'
        : 'revision'
      : ctx.edits.has(lead.id) && lead.role === 'user'
        ? 'edit'
        : lead.role === 'user'
          ? 'new-question'
          : 'answer';

  const records: StoredMessage[] = incoming.map((message, i) => {
    const stored = changed.get(start + i);
    // A new version of a stored message keeps the stored id (the browser may know an alias).
    const id = stored?.record.message.id ?? message.id;
    return { version: ctx.version, message: id === message.id ? message : { ...message, id } };
  });
  if (kind === 'edit') records[0] = editedRecord(records[0]!, firstChanged, ctx.version);

  const atEnd =
    kind === 'new-question' ||
    (kind === 'answer' && (anchor === undefined || anchor.entry === tail)) ||
    (kind === 'revision' && firstChanged === tail);
  const data = kind === 'revision' ? revisionData(records) : messageData(records);
  const saved = records.map((r) => r.message.id);

  if (atEnd) {
    await walk.return(undefined);
    const added = records.filter((r) => !walked.has(r.message.id)).length;
    return {
      kind: 'write',
      head,
      on: head,
      onMeta: headMeta,
      records,
      data,
      saved,
      metadata: {
        ...titled(headMeta, headMeta, records),
        messages: headMeta.messages + added,
        ids: saved,
        tail: tailOf(records.at(-1)!),
      },
    };
  }

  // A new branch, after the anchor (or, with none, from the chat's empty root).
  const { on, repeated, onMeta } = await branchStart(ctx, walk, anchor?.entry);
  const all = [...repeated, ...records];
  return {
    kind: 'write',
    head,
    on,
    onMeta,
    records: all,
    data,
    saved,
    metadata: {
      ...titled(headMeta, onMeta, all),
      messages: onMeta.messages + all.length,
      ids: all.map((r) => r.message.id),
      tail: tailOf(all.at(-1)!),
    },
  };
}

/** How far from the end of the list the newest stored message is looked for, on the quick path. */
const TAIL_REACH = 64;

/**
 * The plan, without reading any message, when the list holds the chat's newest stored message
 * (its head's `tail`) unchanged: all that follows it is new and goes at the end. Undefined
 * when the list does not, and the branch must be walked.
 */
function planAtTail(
  ctx: SaveContext,
  messages: UIMessage[],
  head: number,
  headMeta: ChatMetadata,
): SavePlan | undefined {
  const { tail } = headMeta;
  if (tail === undefined || ctx.edits.size > 0) return undefined;
  let at = messages.length - 1;
  const stop = Math.max(0, messages.length - TAIL_REACH);
  while (at >= stop && (messages[at] as UIMessage | undefined)?.id !== tail.id) at--;
  if (at < stop) return undefined;
  checkMessage(messages[at], `messages[${at}]`);
  if (digestOf(messages[at]) !== tail.digest) return undefined;
  const incoming = messages.slice(at + 1);
  if (incoming.length === 0) return { kind: 'none' };
  checkMessages(incoming, at + 1);
  if (incoming.some((m) => m.id === tail.id)) throw twice(tail.id);
  const records = incoming.map((message) => ({ version: ctx.version, message }));
  const saved = records.map((r) => r.message.id);
  return {
    kind: 'write',
    head,
    on: head,
    onMeta: headMeta,
    records,
    data: messageData(records),
    saved,
    metadata: {
      ...titled(headMeta, headMeta, records),
      messages: headMeta.messages + records.length,
      ids: saved,
      tail: tailOf(records.at(-1)!),
    },
  };
}

/** The title a new checkpoint carries: the application's, else the branch's first question. */
function titled(
  headMeta: ChatMetadata,
  onMeta: ChatMetadata,
  records: StoredMessage[],
): Pick<ChatMetadata, 'title' | 'titleSet'> {
  if (headMeta.titleSet) return { title: headMeta.title, titleSet: true };
  return { title: onMeta.title ?? titleOf(records) };
}

/**
 * Where a branch after `anchor` starts: on the anchor's checkpoint when the anchor is its last
 * message, else on that checkpoint's parent, repeating its messages up to the anchor.
 */
async function branchStart(
  ctx: SaveContext,
  walk: AsyncGenerator<BranchEntry>,
  anchor: BranchEntry | undefined,
): Promise<{ on: number; repeated: StoredMessage[]; onMeta: ChatMetadata }> {
  const { store, sessionId } = ctx;
  if (anchor === undefined) {
    await walk.return(undefined);
    const root = await rootOf(store, sessionId);
    if (root === null) {
      throw new CkptError(
        'NOT_FOUND',
        `chat session ${JSON.stringify(sessionId)} has no root checkpoint to branch from (was it written by another program, or pruned?); nothing was saved.`,
        { details: { argument: 'chatId' } },
      );
    }
    return { on: root.seq, repeated: [], onMeta: readMetadata(root.metadata) };
  }
  const holding = await store.load(sessionId, anchor.seq);
  const holdingMeta = readMetadata(holding?.metadata);
  if (holding === null || anchor.index >= holdingMeta.ids.length - 1) {
    await walk.return(undefined);
    return { on: anchor.seq, repeated: [], onMeta: holdingMeta };
  }
  // The checkpoint's messages before the anchor come next in the walk, newest first.
  const before: StoredMessage[] = [];
  for (let step = anchor.index > 0 ? await walk.next() : undefined; step && !step.done; ) {
    const entry = step.value;
    if (entry.seq !== anchor.seq) break;
    before.push(entry.record);
    if (entry.index === 0) break;
    step = await walk.next();
  }
  await walk.return(undefined);
  const parent = holding.parent;
  if (parent === null) {
    throw new CkptError(
      'NOT_FOUND',
      `chat session ${JSON.stringify(sessionId)}: the checkpoint before message ${JSON.stringify(anchor.record.message.id)} is no longer stored (pruned?); nothing was saved.`,
      { details: { argument: 'messages' } },
    );
  }
  const parentMeta = readMetadata((await store.load(sessionId, parent))?.metadata);
  return { on: parent, repeated: [...before.reverse(), anchor.record], onMeta: parentMeta };
}

/**
 * The chat's root checkpoint, by its idempotency key; in a chat that core's fork, copy or
 * import made (which carry no keys), the oldest checkpoint of the active timeline when it is
 * the root. Null when neither is.
 */
async function rootOf(store: CheckpointStore, sessionId: string): Promise<Checkpoint | null> {
  const byKey = await store.loadByKey(sessionId, saveKey({ root: true }));
  if (byKey !== null) return byKey;
  const [oldest] = await store.history(sessionId);
  const found = oldest === undefined ? null : await store.load(sessionId, oldest);
  return found !== null && found.parent === null && isRoot(found.data) ? found : null;
}

/**
 * An edited user message, stored under an id derived from the id it edits and its content, so
 * that the same edit saved twice is the same message, and every message id of the chat's
 * tree stays unique.
 */
function editedRecord(
  record: StoredMessage,
  original: BranchEntry | undefined,
  version: number,
): StoredMessage {
  const root = original?.record.editOf ?? original?.record.message.id ?? record.message.id;
  const id = `${root}~${digestOf({ ...record.message, id: root }).slice(0, 12)}`;
  return { version, message: { ...record.message, id }, editOf: root };
}

/** Whether `message` from the list is `entry` as stored, or as a load shows it. */
async function isStoredAs(
  ctx: SaveContext,
  message: UIMessage,
  entry: BranchEntry,
  last: boolean,
): Promise<boolean> {
  const stored = entry.record.message;
  const candidate = message.id === stored.id ? message : { ...message, id: stored.id };
  if (sameMessage(candidate, stored)) return true;
  const shown = await ctx.shown(entry.record, last);
  return shown !== null && sameMessage(candidate, shown);
}

/** The list's messages by id, indexed from the end as far as lookups need. */
class ListIndex {
  readonly #messages: UIMessage[];
  readonly #byId = new Map<string, number>();
  #indexedFrom: number;

  constructor(messages: UIMessage[]) {
    this.#messages = messages;
    this.#indexedFrom = messages.length;
  }

  /** The place in the list of the message stored as `record` (by its id, or the id it edits). */
  find(record: StoredMessage): number | undefined {
    return (
      this.#lookup(record.message.id) ??
      (record.editOf === undefined ? undefined : this.#lookup(record.editOf))
    );
  }

  #lookup(id: string): number | undefined {
    const known = this.#byId.get(id);
    if (known !== undefined) return known;
    while (this.#indexedFrom > 0) {
      const i = --this.#indexedFrom;
      const message = this.#messages[i];
      checkShape(message, `messages[${i}]`);
      if (this.#byId.has(message.id)) throw twice(message.id);
      this.#byId.set(message.id, i);
      if (message.id === id) return i;
    }
    return undefined;
  }
}

/** Refuse `messages` (from `from` on) unless each is a message, with an id of its own. */
function checkMessages(messages: unknown[], from: number): asserts messages is UIMessage[] {
  const ids = new Set<string>();
  for (const [i, message] of messages.entries()) {
    checkMessage(message, `messages[${from + i}]`);
    if (ids.has(message.id)) throw twice(message.id);
    ids.add(message.id);
  }
}

function refuse(message: string): CkptError {
  return new CkptError('INVALID_ARGUMENT', message, { details: { argument: 'messages' } });
}

function twice(id: string): CkptError {
  return refuse(`messages holds id ${JSON.stringify(id)} twice; each message needs its own id.`);
}
