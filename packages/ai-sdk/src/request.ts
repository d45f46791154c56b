/**
 * A chat request as `useChat` sends it with the "send only the last message" transport (its
 * last message, the trigger and the message id), turned into the history the model gets: the
 * stored active branch, cut where the request branches, with the request's message. The
 * history is also what `toUIMessageStream` takes as `originalMessages`, so that the save in
 * `onEnd` sees where the new messages go. Decisions on tool approvals that the message carries
 * are recorded here, once, before any tool can run.
 */
import { type CheckpointStore, CkptError, type StateScope } from '@ckpt/core';
import { safeValidateUIMessages, type UIMessage } from 'ai';
import {
  alreadyDecided,
  answeredApprovals,
  approvalState,
  readDecisions,
  recordDecisions,
} from './approvals.js';
import { type BranchEntry, readBranch } from './branch.js';
import { checkMessage } from './message-checks.js';
import { type MessageRules, presentEach } from './presenting.js';
import { sameMessage } from './records.js';

/** What the browser sends: the chat's last message, and what `useChat` was asked to do. */
export interface ChatRequest<UI_MESSAGE extends UIMessage = UIMessage> {
  /** The last message of the chat in the browser. */
  message: UI_MESSAGE;
  /** `'submit-message'` (the default) or `'regenerate-message'`, as `useChat` names it. */
  trigger?: 'submit-message' | 'regenerate-message';
  /**
   * The message `useChat` was asked to edit (`sendMessage({ messageId })`) or regenerate
   * (`regenerate({ messageId })`). A regeneration's is checked against `message`: NOT_FOUND
   * when it is not on the active branch, INVALID_ARGUMENT when the AI SDK's cut at it would
   * not leave `message` last.
   */
  messageId?: string;
}

/** What a request needs to know about the chat and the application. */
export interface RequestContext<UI_MESSAGE extends UIMessage> {
  store: CheckpointStore;
  sessionId: string;
  chatId: string;
  rules: MessageRules<UI_MESSAGE>;
  approvals: StateScope;
}

/** The history for the model and for `originalMessages`, for `request`. */
export async function historyFor<UI_MESSAGE extends UIMessage>(
  ctx: RequestContext<UI_MESSAGE>,
  request: ChatRequest<UI_MESSAGE>,
): Promise<UI_MESSAGE[]> {
  const { message, trigger, messageId } = checkRequest(request);
  const { store, sessionId, chatId, rules, approvals } = ctx;
  const [entries, decisions] = await Promise.all([
    readBranch(store, sessionId),
    readDecisions(approvals, sessionId),
  ]);
  const shown = await presentEach(
    chatId,
    entries.map((entry, i) => ({ record: entry.record, last: i === entries.length - 1 })),
    rules,
    decisions,
  );
  const upTo = (end: number) => shown.slice(0, end).filter((m): m is UI_MESSAGE => m !== null);
  const at = place(entries, message.id);

  if (entries.length === 0) {
    // Nothing to regenerate or edit in a chat that is not there: the page holds another.
    if (trigger === 'regenerate-message' || messageId !== undefined) {
      throw noSuchChat(chatId, messageId ?? message.id);
    }
  }
  if (trigger === 'regenerate-message') {
    if (at === -1) throw notOnBranch(chatId, message.id);
    if (messageId !== undefined) {
      checkRegenerated({ entries, shown, at, sent: message.id }, messageId, chatId);
    }
    return upTo(at + 1);
  }
  if (messageId !== undefined) {
    // An edit: sendMessage({ text, messageId }) sends the edited message under messageId.
    if (place(entries, messageId) === -1) throw notOnBranch(chatId, messageId);
    if (messageId !== message.id) {
      throw new CkptError(
        'INVALID_ARGUMENT',
        `an edit's messageId ${JSON.stringify(messageId)} is not the id of the message it sends (${JSON.stringify(message.id)}); sendMessage({ text, messageId }) sends the edited message under messageId.`,
        { details: { argument: 'messageId' } },
      );
    }
  }
  const incoming = await validated(message, rules);
  if (at === -1) {
    if (message.role !== 'user' || messageId === message.id) throw notOnBranch(chatId, message.id);
    return [...upTo(entries.length), incoming];
  }
  const stored = entries[at]!.record.message;
  if (message.role === 'assistant') {
    await recordAnswers(ctx, stored, incoming);
    return [...upTo(at), incoming];
  }
  const same = message.id === stored.id ? message : { ...message, id: stored.id };
  const unchanged = sameMessage(same, stored) || sameMessage(same, shown[at]);
  // A message sent again answers from where it stands; one with other content is an edit.
  return unchanged ? upTo(at + 1) : [...upTo(at), incoming];
}

/**
 * Record the decisions an assistant message from the browser carries on the approvals its
 * stored version asked for. A decision on an approval whose tool has already run, or that was
 * decided otherwise before (in another tab, by another process), is refused with CONFLICT. The
 * same decision on an approval still waiting is a retry: the turn it started was never saved
 * (the server died, the request was cut off), and goes on.
 */
async function recordAnswers<UI_MESSAGE extends UIMessage>(
  ctx: RequestContext<UI_MESSAGE>,
  stored: UIMessage,
  incoming: UIMessage,
): Promise<void> {
  const decisions = answeredApprovals(incoming);
  for (const { approvalId } of decisions) {
    const state = approvalState(stored, approvalId);
    if (state === undefined) {
      throw new CkptError(
        'INVALID_ARGUMENT',
        `message ${JSON.stringify(incoming.id)} answers tool approval ${JSON.stringify(approvalId)}, which the chat never asked for.`,
        { details: { argument: 'message', approvalId } },
      );
    }
    if (state !== 'approval-requested' && state !== 'approval-responded') {
      throw alreadyDecided(approvalId);
    }
  }
  await recordDecisions(ctx.approvals, ctx.sessionId, decisions);
}

/**
 * Where the message with id `id` is on the active branch: by its id, else as the message
 * stored for an edit of that id (the browser keeps the id it gave an edited message until it
 * reloads).
 */
function place(entries: BranchEntry[], id: string): number {
  const byId = entries.findIndex((e) => e.record.message.id === id);
  if (byId !== -1) return byId;
  return entries.findLastIndex((e) => e.record.editOf === id);
}

/**
 * Hold a regeneration's `messageId` to what `useChat`'s `regenerate({ messageId })` did before
 * it sent `message` (the message at `at`): it cut the chat just before that message when it is
 * an assistant's, just after it otherwise, and sent the last message left. A `messageId` that
 * is not on the active branch, or that such a cut would not end at `message`, says the page
 * holds another chat than the store (another tab switched branches, a stale page): answering
 * from `message` would regenerate another message than the one asked for.
 */
function checkRegenerated(
  branch: {
    entries: BranchEntry[];
    shown: readonly (UIMessage | null)[];
    at: number;
    /** The id the request sent `message` under. */
    sent: string;
  },
  messageId: string,
  chatId: string,
): void {
  const { entries, shown, at, sent } = branch;
  const target = place(entries, messageId);
  if (target === -1) throw notOnBranch(chatId, messageId);
  const end = entries[target]!.record.message.role === 'assistant' ? target : target + 1;
  // Messages the page never got (left out by onInvalid) may stand between the two.
  if (end > at && shown.slice(at + 1, end).every((m) => m === null)) return;
  const left = shown.slice(0, end).findLast((m) => m !== null)?.id;
  throw new CkptError(
    'INVALID_ARGUMENT',
    `regenerate({ messageId: ${JSON.stringify(messageId)} }) leaves ${left === undefined ? 'no message' : `message ${JSON.stringify(left)}`} last in chat ${JSON.stringify(chatId)}, but the request sends message ${JSON.stringify(sent)}; send the last message left (messages.at(-1)), or reload the chat.`,
    { details: { argument: 'messageId' } },
  );
}

async function validated<UI_MESSAGE extends UIMessage>(
  message: UI_MESSAGE,
  rules: MessageRules<UI_MESSAGE>,
): Promise<UI_MESSAGE> {
  const result = await safeValidateUIMessages<UI_MESSAGE>({
    messages: [message],
    ...rules.schemas,
  });
  if (result.success) return result.data[0]!;
  throw new CkptError(
    'INVALID_ARGUMENT',
    `message ${JSON.stringify(message.id)} does not match the chat's tools and schemas: ${result.error.message}`,
    { cause: result.error, details: { argument: 'message' } },
  );
}

function noSuchChat(chatId: string, messageId: string): CkptError {
  return new CkptError(
    'NOT_FOUND',
    `chat ${JSON.stringify(chatId)} does not exist, so message ${JSON.stringify(messageId)} cannot be regenerated or edited in it; reload the chat.`,
    { details: { argument: 'messageId' } },
  );
}

function notOnBranch(chatId: string, messageId: string): CkptError {
  return new CkptError(
    'NOT_FOUND',
    `message ${JSON.stringify(messageId)} is not on the active branch of chat ${JSON.stringify(chatId)} (another tab may have switched branches); reload the chat.`,
    { details: { argument: 'messageId' } },
  );
}

function checkRequest<UI_MESSAGE extends UIMessage>(
  request: ChatRequest<UI_MESSAGE>,
): Required<Pick<ChatRequest<UI_MESSAGE>, 'message' | 'trigger'>> & { messageId?: string } {
  const refuse = (argument: string, message: string) =>
    new CkptError('INVALID_ARGUMENT', message, { details: { argument } });
  if (typeof request !== 'object' || request === null) {
    throw refuse('request', 'receive() takes the request body: { message, trigger?, messageId? }.');
  }
  const { message, trigger = 'submit-message', messageId } = request;
  if (message === undefined || message === null) {
    throw refuse(
      'message',
      'the request has no message: send the last message of the chat as `message`.',
    );
  }
  checkMessage(message, 'message');
  if (trigger !== 'submit-message' && trigger !== 'regenerate-message') {
    throw refuse(
      'trigger',
      `trigger must be 'submit-message' or 'regenerate-message', got ${JSON.stringify(trigger)}.`,
    );
  }
  if (messageId !== undefined && typeof messageId !== 'string') {
    throw refuse('messageId', 'messageId must be a string when given.');
  }
  return messageId === undefined ? { message, trigger } : { message, trigger, messageId };
}
