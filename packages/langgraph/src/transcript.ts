/**
 * The transcript a `put` appends: the messages a checkpoint added to the graph's message
 * channels (channels whose value is a list of LangChain messages, such as the `messages` of
 * MessagesAnnotation), one compact JSON item each, so that tools that read a ckpt session's
 * transcript show the conversation with its roles.
 */
import type { JsonValue } from '@ckpt/core';
import { type BaseMessage, isBaseMessage } from '@langchain/core/messages';

/** One transcript item: a message that a checkpoint added to a message channel. */
export interface TranscriptMessage {
  /** `user`, `assistant`, `system` or `tool` (a `ChatMessage` keeps its own role). */
  role: string;
  /** The message's text: its text content blocks, joined. */
  text: string;
  /** The message's id. */
  id?: string;
  /** The message's name, where it has one (a tool's name on a tool message). */
  name?: string;
  /** The tool calls an assistant message makes. */
  toolCalls?: { id?: string; name: string; args?: JsonValue }[];
  /** The tool call a tool message answers. */
  toolCallId?: string;
  /** The channel, when it is not `messages`. */
  channel?: string;
}

/** What the saver remembers of a message channel at one checkpoint, to tell what the next adds. */
export interface KnownMessages {
  /** The text of each message that has an id. */
  texts: Map<string, string>;
  /** How many messages the channel held (for messages without an id). */
  count: number;
}

/** A channel without messages, as a new thread's channels are. */
export const NO_MESSAGES: KnownMessages = { texts: new Map(), count: 0 };

/** The channel most graphs keep their conversation in, which items do not name. */
const DEFAULT_CHANNEL = 'messages';

const ROLES: Record<string, string> = {
  human: 'user',
  ai: 'assistant',
  system: 'system',
  developer: 'system',
  tool: 'tool',
  function: 'tool',
};

/** The messages of `value` when it is a list of LangChain messages, else undefined. */
export function messagesIn(value: unknown): BaseMessage[] | undefined {
  return Array.isArray(value) && value.every(isBaseMessage) ? value : undefined;
}

// A string content is its own text, without building it again from content blocks.
function textOf(message: BaseMessage): string {
  return typeof message.content === 'string' ? message.content : message.text;
}

/** What to remember of `messages`. */
export function knownMessages(messages: BaseMessage[]): KnownMessages {
  const texts = new Map<string, string>();
  for (const message of messages) {
    if (typeof message.id === 'string') texts.set(message.id, textOf(message));
  }
  return { texts, count: messages.length };
}

/**
 * The messages of `messages` that are not in `before`: those whose id it did not have, or
 * had with another text (a message replaced under its id), and those without an id past
 * its count.
 */
export function addedMessages(messages: BaseMessage[], before: KnownMessages): BaseMessage[] {
  return messages.filter((message, i) =>
    typeof message.id === 'string'
      ? before.texts.get(message.id) !== textOf(message)
      : i >= before.count,
  );
}

/** `value` as JSON, or undefined when JSON cannot carry it. */
function asJson(value: unknown): JsonValue | undefined {
  try {
    const text = JSON.stringify(value);
    return text === undefined ? undefined : (JSON.parse(text) as JsonValue);
  } catch {
    return undefined;
  }
}

/** The transcript item of `message` in `channel`, or undefined for a removal marker. */
export function transcriptItem(message: BaseMessage, channel: string): JsonValue | undefined {
  const type = message.getType();
  if (type === 'remove') return undefined;
  const own = message as BaseMessage & {
    role?: unknown;
    tool_calls?: { id?: string; name: string; args?: unknown }[];
    tool_call_id?: unknown;
  };
  const role = ROLES[type] ?? (typeof own.role === 'string' ? own.role : type);
  const item: TranscriptMessage = { role, text: textOf(message) };
  if (typeof message.id === 'string') item.id = message.id;
  if (typeof message.name === 'string') item.name = message.name;
  if (Array.isArray(own.tool_calls) && own.tool_calls.length > 0) {
    item.toolCalls = own.tool_calls.map((call) => {
      const args = asJson(call.args);
      return {
        ...(typeof call.id === 'string' ? { id: call.id } : {}),
        name: String(call.name),
        ...(args === undefined ? {} : { args }),
      };
    });
  }
  if (typeof own.tool_call_id === 'string') item.toolCallId = own.tool_call_id;
  if (channel !== DEFAULT_CHANNEL) item.channel = channel;
  return item as unknown as JsonValue;
}
