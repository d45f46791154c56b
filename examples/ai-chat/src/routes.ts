/**
 * The chat's API, as Web `Request` → `Response` handlers (the shape of Next.js route handlers):
 * the chat route that streams from the model and saves through `@ckpt/ai-sdk`, and the reads
 * the page needs for branches.
 */
import type { ChatRequest, CkptChatStore } from '@ckpt/ai-sdk';
import { isCkptError } from '@ckpt/core';
import {
  convertToModelMessages,
  createUIMessageStreamResponse,
  streamText,
  toUIMessageStream,
} from 'ai';
import { chatModel } from './model.js';
import { toolApproval, tools } from './tools.js';

/** The handlers of the chat's API on `chats`. */
export function chatRoutes(chats: CkptChatStore) {
  return {
    /** `POST /api/chat`: the request useChat sends; the answer streams back and is saved. */
    async chat(req: Request): Promise<Response> {
      const { id, ...request } = (await req.json()) as { id: string } & ChatRequest;
      const messages = await chats.receive(id, request);
      const result = streamText({
        model: chatModel(),
        messages: await convertToModelMessages(messages, { tools }),
        tools,
        toolApproval,
      });
      return createUIMessageStreamResponse({
        stream: toUIMessageStream({
          stream: result.stream,
          originalMessages: messages,
          generateMessageId: chats.generateMessageId,
          onEnd: chats.onEnd(id),
        }),
      });
    },

    /** `GET /api/chat/:id`: the active branch. */
    async messages(id: string): Promise<Response> {
      return Response.json({ messages: await chats.load(id) });
    },

    /** `GET /api/chat/:id/tree`: every branch, for the branch pickers. */
    async tree(id: string): Promise<Response> {
      return Response.json(await chats.tree(id));
    },

    /** `POST /api/chat/:id/switch`: make the branch holding `messageId` the active one. */
    async switchBranch(id: string, req: Request): Promise<Response> {
      const { messageId } = (await req.json()) as { messageId: string };
      await chats.switchBranch(id, messageId);
      return Response.json({ messages: await chats.load(id) });
    },
  };
}

/** A ckpt error as the HTTP status that says the same, with its message. */
export function errorResponse(err: unknown): Response {
  const status = isCkptError(err, 'CONFLICT')
    ? 409
    : isCkptError(err, 'NOT_FOUND')
      ? 404
      : isCkptError(err, 'INVALID_ARGUMENT')
        ? 400
        : 500;
  const message = err instanceof Error ? err.message : String(err);
  return Response.json({ error: message }, { status });
}
