/**
 * A transcript item seen as a chat message, whichever framework wrote it: who said it, what
 * it said, and the tools it called. It recognizes
 *
 * - `{ role, text, id?, name?, toolCalls?, toolCallId? }`, as @ckpt/langgraph writes transcript
 *   items;
 * - `{ role, content: string }`, the common chat shape (with Chat Completions' `tool_calls`);
 * - `{ role, content: [{ type: 'input_text' | 'output_text' | 'text', text }, …] }`, OpenAI
 *   Agents SDK messages (other parts, such as images, stand as `[input_image]`);
 * - Agents SDK `{ type: 'function_call', name, arguments, callId }` and
 *   `{ type: 'function_call_result', name, callId, output }` items, as a tool call and its result;
 * - LangChain messages as serialized (`{ lc: 1, type: 'constructor', id: [..., 'HumanMessage'],
 *   kwargs: { content, tool_calls? } }`), for Human, AI, System, Tool, Function and Chat messages;
 * - AI SDK `UIMessage`s (`{ role, parts: [{ type: 'text', text }, …] }`), tool parts as calls.
 *
 * Anything else is no message (null), and is best shown as the JSON it is. The view depends on
 * nothing but the item, so that any tool showing a transcript reads items the same way.
 */

/** A tool call a message makes. */
export interface ToolCallView {
  name: string;
  /** Its arguments as text (JSON, or the text the model wrote). */
  arguments: string;
  id?: string;
}

/** A message: its role, its text, the tools it calls. */
export interface MessageView {
  /** `user`, `assistant`, `system`, `tool`, or whatever role the item names. */
  role: string;
  /** Its text: the text parts joined by newlines, other parts as `[type]`; '' when none. */
  text: string;
  /** The name of the speaker, or of the tool whose result this is. */
  name?: string;
  id?: string;
  toolCalls: ToolCallView[];
  /** For a tool's result: the id of the call it answers. */
  toolCallId?: string;
}

type Obj = { [key: string]: unknown };

const isObj = (value: unknown): value is Obj =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

const str = (value: unknown): string | undefined => (typeof value === 'string' ? value : undefined);

/** Arguments as text: a string as it is, anything else as JSON. */
const argumentText = (value: unknown): string =>
  typeof value === 'string' ? value : value === undefined ? '' : JSON.stringify(value);

/** The text of content: a string, or parts whose text is joined; undefined when it is neither. */
function contentText(content: unknown): string | undefined {
  if (typeof content === 'string') return content;
  if (!Array.isArray(content) || !content.every((part) => isObj(part) || typeof part === 'string'))
    return undefined;
  return content
    .map((part) => {
      if (typeof part === 'string') return part;
      const p = part as Obj;
      const text = str(p.text) ?? str(p.refusal);
      if (
        text !== undefined &&
        ['input_text', 'output_text', 'text', 'refusal'].includes(String(p.type))
      )
        return text;
      return `[${typeof p.type === 'string' ? p.type : 'part'}]`;
    })
    .join('\n');
}

/** Tool calls as @ckpt/langgraph or LangChain write them: `[{ name, args | arguments, id? }]`. */
function toolCalls(value: unknown): ToolCallView[] {
  if (!Array.isArray(value)) return [];
  return value.filter(isObj).map((call) => {
    const fn = isObj(call.function) ? call.function : call;
    return {
      name: str(fn.name) ?? '?',
      arguments: argumentText(fn.args ?? fn.arguments),
      ...(str(call.id) === undefined ? {} : { id: str(call.id) }),
    };
  });
}

/** The fields a message may carry besides role and text. */
function extras(item: Obj): Pick<MessageView, 'name' | 'id'> {
  const name = str(item.name);
  const id = str(item.id);
  return { ...(name === undefined ? {} : { name }), ...(id === undefined ? {} : { id }) };
}

const LANGCHAIN_ROLES: Record<string, string> = {
  HumanMessage: 'user',
  AIMessage: 'assistant',
  SystemMessage: 'system',
  ToolMessage: 'tool',
  FunctionMessage: 'tool',
};

/** A LangChain message as `dumpd` serializes it. */
function langChain(item: Obj): MessageView | null {
  if (item.lc !== 1 || item.type !== 'constructor' || !Array.isArray(item.id)) return null;
  if (!isObj(item.kwargs)) return null;
  const kind = String(item.id.at(-1)).replace(/Chunk$/, '');
  const kwargs = item.kwargs;
  const role = kind === 'ChatMessage' ? str(kwargs.role) : LANGCHAIN_ROLES[kind];
  const text = contentText(kwargs.content ?? '');
  if (role === undefined || text === undefined) return null;
  return withToolFields(role, text, kwargs);
}

/**
 * A message whose other fields are named as LangChain's kwargs and Chat Completions name them:
 * `name`, `id`, `tool_calls`, `tool_call_id`.
 */
function withToolFields(role: string, text: string, fields: Obj): MessageView {
  const toolCallId = str(fields.tool_call_id);
  return {
    role,
    text,
    ...extras(fields),
    toolCalls: toolCalls(fields.tool_calls),
    ...(toolCallId === undefined ? {} : { toolCallId }),
  };
}

/** An Agents SDK function call or its result. */
function agentsTool(item: Obj): MessageView | null {
  const name = str(item.name);
  const callId = str(item.callId);
  if (item.type === 'function_call' && name !== undefined) {
    return {
      role: 'assistant',
      text: '',
      toolCalls: [
        { name, arguments: argumentText(item.arguments), ...(callId ? { id: callId } : {}) },
      ],
    };
  }
  if (item.type === 'function_call_result' && name !== undefined) {
    const output = item.output;
    const text = isObj(output) ? contentText([output]) : contentText(output);
    return {
      role: 'tool',
      text: text ?? argumentText(output),
      name,
      toolCalls: [],
      ...(callId ? { toolCallId: callId } : {}),
    };
  }
  return null;
}

/** The AI SDK's UIMessage parts: text joined, tool parts (`tool-<name>`) as calls. */
function uiParts(item: Obj, role: string): MessageView | null {
  if (!Array.isArray(item.parts) || !item.parts.every(isObj)) return null;
  const texts: string[] = [];
  const calls: ToolCallView[] = [];
  for (const part of item.parts as Obj[]) {
    const type = String(part.type);
    if (type === 'text' && typeof part.text === 'string') texts.push(part.text);
    else if (type.startsWith('tool-') || type === 'dynamic-tool') {
      const id = str(part.toolCallId);
      calls.push({
        name: type === 'dynamic-tool' ? (str(part.toolName) ?? '?') : type.slice('tool-'.length),
        arguments: argumentText(part.input),
        ...(id === undefined ? {} : { id }),
      });
    } else if (type !== 'step-start' && type !== 'reasoning') texts.push(`[${type}]`);
  }
  return { role, text: texts.join('\n'), ...extras(item), toolCalls: calls };
}

/** `item` as a message, or null when it is not one this view knows. */
export function messageView(item: unknown): MessageView | null {
  if (!isObj(item)) return null;
  const lc = langChain(item);
  if (lc !== null) return lc;
  const tool = agentsTool(item);
  if (tool !== null) return tool;
  const role = str(item.role);
  if (role === undefined || role === '') return null;
  if (typeof item.text === 'string') {
    const toolCallId = str(item.toolCallId);
    return {
      role,
      text: item.text,
      ...extras(item),
      toolCalls: toolCalls(item.toolCalls),
      ...(toolCallId === undefined ? {} : { toolCallId }),
    };
  }
  if ('content' in item) {
    // Chat Completions messages carry `tool_calls` (with content null) and `tool_call_id`.
    const text = item.content === null ? '' : contentText(item.content);
    return text === undefined ? null : withToolFields(role, text, item);
  }
  return uiParts(item, role);
}
