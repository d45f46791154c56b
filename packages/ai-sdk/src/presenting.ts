/**
 * Stored messages as the application reads them. Each is upgraded from the schema version it
 * was saved under by the application's upgrade functions, shows the approval decisions recorded
 * since, and is validated against the application's tools and metadata and data schemas with
 * the AI SDK's `safeValidateUIMessages`. A message that still cannot be used is handled by the
 * application's policy, never by losing the chat; what is stored is never rewritten.
 */
import { CkptError } from '@ckpt/core';
import { isToolUIPart, safeValidateUIMessages, type UIMessage } from 'ai';
import { type ApprovalDecision, withDecisions } from './approvals.js';
import type { StoredMessage } from './records.js';

/** The options of `safeValidateUIMessages` that describe the application's messages. */
export type MessageSchemas<UI_MESSAGE extends UIMessage> = Pick<
  Parameters<typeof safeValidateUIMessages<UI_MESSAGE>>[0],
  'tools' | 'metadataSchema' | 'dataSchemas'
>;

/** Why a stored message cannot be shown as it is. */
export type InvalidReason =
  /** Saved under a newer message schema version than the application's. */
  | 'newer-version'
  /** An upgrade function is missing for its version, or threw. */
  | 'upgrade-failed'
  /** `safeValidateUIMessages` refuses it under the current tools and schemas. */
  | 'invalid'
  /** A tool part was cut off before it finished (see `unfinishedParts`). */
  | 'unfinished-tool';

/** A stored message that cannot be shown as it is, as the `onInvalid` policy receives it. */
export interface InvalidMessage {
  chatId: string;
  /** The message exactly as stored. */
  stored: UIMessage;
  /** The message schema version it was saved under. */
  version: number;
  /** The message after its upgrades (and recorded approval decisions), when they ran. */
  message: UIMessage | undefined;
  reason: InvalidReason;
  /** What failed, when something threw or validation said why. */
  error: Error | undefined;
}

/**
 * What `load` does with a message that cannot be shown as it is:
 * - `'drop-part'` (the default): drop the parts that fail (an unfinished tool part, a part that
 *   fails validation on its own); a message that still fails, or has nothing left to show, or
 *   could not be upgraded, becomes the placeholder;
 * - `'placeholder'`: show the placeholder (a text part) in its place, with its id and role;
 * - `'throw'`: refuse to load the chat, with a `CkptError` of code `SCHEMA`;
 * - a function: the message to show instead, or null to leave it out.
 */
export type InvalidMessagePolicy<UI_MESSAGE extends UIMessage> =
  | 'drop-part'
  | 'placeholder'
  | 'throw'
  | ((failure: InvalidMessage) => UI_MESSAGE | null);

/** How an application's stored messages are read. */
export interface MessageRules<UI_MESSAGE extends UIMessage> {
  version: number;
  upgrades: Record<number, (message: UIMessage) => UIMessage>;
  schemas: MessageSchemas<UI_MESSAGE>;
  onInvalid: InvalidMessagePolicy<UI_MESSAGE>;
  placeholder: string;
}

/** Why a message failed, before the chat and the stored message are added. */
type Failure = Omit<InvalidMessage, 'chatId' | 'stored' | 'version'>;

/** A stored message to present, and whether it is the newest of its branch. */
export interface ToPresent {
  record: StoredMessage;
  last: boolean;
}

/** The messages of `entries`, in order, as the application reads them. */
export async function present<UI_MESSAGE extends UIMessage>(
  chatId: string,
  entries: ToPresent[],
  rules: MessageRules<UI_MESSAGE>,
  decisions: Map<string, ApprovalDecision>,
): Promise<UI_MESSAGE[]> {
  const shown = await presentEach(chatId, entries, rules, decisions);
  return shown.filter((message): message is UI_MESSAGE => message !== null);
}

/** Each of `entries` as the application reads it, or null where the policy leaves it out. */
export async function presentEach<UI_MESSAGE extends UIMessage>(
  chatId: string,
  entries: ToPresent[],
  rules: MessageRules<UI_MESSAGE>,
  decisions: Map<string, ApprovalDecision>,
): Promise<(UI_MESSAGE | null)[]> {
  if (entries.length === 0) return [];
  const upgraded = entries.map(({ record }) => upgrade(record, rules, decisions));
  const ready = upgraded.filter((u) => u.ok);
  // One validation for the whole list; only when it fails is each message validated alone.
  const all =
    ready.length === entries.length
      ? await safeValidateUIMessages<UI_MESSAGE>({
          messages: ready.map((u) => u.message),
          ...rules.schemas,
        })
      : undefined;
  const out: (UI_MESSAGE | null)[] = [];
  for (const [i, { record, last }] of entries.entries()) {
    const step = upgraded[i]!;
    let failure: Failure;
    if (step.ok) {
      const valid = all?.success ? all.data[i]! : await validateOne(step.message, rules);
      if (valid instanceof Error) {
        failure = { message: step.message, reason: 'invalid', error: valid };
      } else if (unfinishedParts(valid, last).length === 0) {
        out.push(valid);
        continue;
      } else {
        failure = { message: valid, reason: 'unfinished-tool', error: undefined };
      }
    } else {
      failure = step.failure;
    }
    out.push(
      await applyPolicy(
        { chatId, stored: record.message, version: record.version, ...failure },
        last,
        rules,
      ),
    );
  }
  return out;
}

/**
 * The tool parts of `message` that were cut off before they finished: a tool call whose input
 * was still streaming, and, in a message that is not the newest, a tool call still waiting
 * for its output or for the run its approval allows. The AI SDK cannot send a history with
 * these to a model (a tool call without a result), so a chat holding one would fail every
 * later request.
 */
export function unfinishedParts(message: UIMessage, last: boolean): number[] {
  const unfinished: number[] = [];
  for (const [i, part] of message.parts.entries()) {
    if (!isToolUIPart(part)) continue;
    if (part.state === 'input-streaming') unfinished.push(i);
    else if (!last && (part.state === 'input-available' || part.state === 'approval-responded')) {
      unfinished.push(i);
    }
  }
  return unfinished;
}

function upgrade<UI_MESSAGE extends UIMessage>(
  record: StoredMessage,
  rules: MessageRules<UI_MESSAGE>,
  decisions: Map<string, ApprovalDecision>,
): { ok: true; message: UIMessage } | { ok: false; failure: Failure } {
  const failed = (reason: InvalidReason, error?: Error) =>
    ({ ok: false, failure: { message: undefined, reason, error } }) as const;
  if (record.version > rules.version) return failed('newer-version');
  let message = record.message;
  for (let version = record.version; version < rules.version; version++) {
    const fn = rules.upgrades[version];
    if (fn === undefined) {
      return failed(
        'upgrade-failed',
        new Error(`no upgrade from message schema version ${version}`),
      );
    }
    try {
      // Upgrades get a copy, so that one that changes its argument cannot change the stored value.
      message = fn(structuredClone(message));
    } catch (err) {
      return failed('upgrade-failed', asError(err));
    }
  }
  return { ok: true, message: withDecisions(message, decisions) };
}

async function validateOne<UI_MESSAGE extends UIMessage>(
  message: UIMessage,
  rules: MessageRules<UI_MESSAGE>,
  schemas: MessageSchemas<UI_MESSAGE> = rules.schemas,
): Promise<UI_MESSAGE | Error> {
  const result = await safeValidateUIMessages<UI_MESSAGE>({ messages: [message], ...schemas });
  return result.success ? result.data[0]! : result.error;
}

async function applyPolicy<UI_MESSAGE extends UIMessage>(
  failure: InvalidMessage,
  last: boolean,
  rules: MessageRules<UI_MESSAGE>,
): Promise<UI_MESSAGE | null> {
  const { onInvalid } = rules;
  if (typeof onInvalid === 'function') return onInvalid(failure);
  if (onInvalid === 'throw') {
    throw new CkptError(
      'SCHEMA',
      `message ${JSON.stringify(failure.stored.id)} of chat ${JSON.stringify(failure.chatId)} cannot be loaded (${failure.reason}${failure.error ? `: ${failure.error.message}` : ''}); register an upgrade for its version ${failure.version}, or choose another onInvalid policy.`,
      { cause: failure.error, details: { argument: 'messages', messageId: failure.stored.id } },
    );
  }
  if (onInvalid === 'drop-part' && failure.message !== undefined) {
    const kept = await withoutFailingParts(failure, last, rules);
    if (kept !== null) return kept;
  }
  return placeholder(failure.stored, rules.placeholder) as UI_MESSAGE;
}

/** The message without the parts that fail, or null when it still fails or has none left. */
async function withoutFailingParts<UI_MESSAGE extends UIMessage>(
  failure: InvalidMessage,
  last: boolean,
  rules: MessageRules<UI_MESSAGE>,
): Promise<UI_MESSAGE | null> {
  let message = failure.message!;
  if (failure.reason === 'invalid') {
    // A part is judged alone and without the metadata, so one bad part or bad metadata does
    // not take the message's other parts with it.
    const { metadataSchema: _, ...partSchemas } = rules.schemas;
    const parts = [];
    for (const part of message.parts) {
      const alone = await validateOne({ ...message, parts: [part] }, rules, partSchemas);
      if (!(alone instanceof Error)) parts.push(part);
    }
    const valid = await validateOne({ ...message, parts }, rules);
    if (valid instanceof Error) return null;
    message = valid;
  }
  const unfinished = new Set(unfinishedParts(message, last));
  const parts = message.parts.filter((_, i) => !unfinished.has(i));
  // Step boundaries alone show nothing.
  const shows = parts.some((part) => part.type !== 'step-start');
  return shows ? ({ ...message, parts } as UI_MESSAGE) : null;
}

function placeholder(stored: UIMessage, text: string): UIMessage {
  const role = stored.role === 'user' || stored.role === 'system' ? stored.role : 'assistant';
  return { id: stored.id, role, parts: [{ type: 'text', text }] };
}

function asError(err: unknown): Error {
  return err instanceof Error ? err : new Error(String(err));
}
