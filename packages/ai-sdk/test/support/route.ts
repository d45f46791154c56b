/**
 * The chat route of the package's README, as the tests drive it: the request `useChat` sends
 * with the "send only the last message" transport, the history from `receive`, `streamText` on
 * the offline model, and `toUIMessageStream` whose `onEnd` saves through the chat store.
 */
import type { CkptChatStore } from '@ckpt/ai-sdk';
import {
  convertToModelMessages,
  streamText,
  type ToolSet,
  toUIMessageStream,
  type UIMessage,
} from 'ai';
import { offlineModel } from '../../../../examples/ai-chat/src/offline-model.js';
import { toolApproval, toolRuns, tools } from '../../../../examples/ai-chat/src/tools.js';

/** The example's tools (the weather tool needs a person's approval), and its run count. */
export { toolApproval, toolRuns as runs, tools };

/** One request to the route: the messages of the chat when the response has been saved. */
export async function send(
  chats: CkptChatStore,
  chatId: string,
  request: {
    message: UIMessage;
    trigger?: 'submit-message' | 'regenerate-message';
    messageId?: string;
  },
  options: { approvalSecret?: string; tools?: ToolSet } = {},
): Promise<{ responseMessage: UIMessage; messages: UIMessage[] }> {
  const history = await chats.receive(chatId, request);
  const toolSet = options.tools ?? tools;
  const result = streamText({
    model: offlineModel(),
    messages: await convertToModelMessages(history, { tools: toolSet }),
    tools: toolSet,
    toolApproval,
    ...(options.approvalSecret ? { experimental_toolApprovalSecret: options.approvalSecret } : {}),
  });
  let ended: { responseMessage: UIMessage; messages: UIMessage[] } | undefined;
  const save = chats.onEnd(chatId);
  const stream = toUIMessageStream({
    stream: result.stream,
    originalMessages: history,
    generateMessageId: chats.generateMessageId,
    onEnd: async (event) => {
      ended = event;
      await save(event);
    },
  });
  const reader = stream.getReader();
  while (!(await reader.read()).done) {}
  if (ended === undefined) throw new Error('the stream ended without onEnd');
  return ended;
}

/** A user message with `text`. */
export function user(id: string, text: string): UIMessage {
  return { id, role: 'user', parts: [{ type: 'text', text }] };
}

/** An assistant message with `text`. */
export function assistant(id: string, text: string): UIMessage {
  return { id, role: 'assistant', parts: [{ type: 'text', text }] };
}

/** The text of a message's text parts. */
export function textOf(message: UIMessage): string {
  return message.parts.map((p) => (p.type === 'text' ? p.text : '')).join('');
}

/** `message` with each approval it asks for answered, as `addToolApprovalResponse` does it. */
export function answer(message: UIMessage, approved: boolean, reason?: string): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) =>
      'approval' in part && part.state === 'approval-requested'
        ? ({
            ...part,
            state: 'approval-responded',
            approval: { ...part.approval, approved, ...(reason ? { reason } : {}) },
          } as unknown as typeof part)
        : part,
    ),
  };
}

/** The tool parts of a message, as `state` (and the approval's id). */
export function toolStates(message: UIMessage | undefined): string[] {
  return (message?.parts ?? [])
    .filter((p) => p.type.startsWith('tool-') || p.type === 'dynamic-tool')
    .map((p) => (p as { state: string }).state);
}
