/**
 * The chat's API, as Web `Request` → `Response` handlers (the shape of Next.js route handlers):
 * the chat route that streams from the model and saves through `@ckpt/ai-sdk`, the route a
 * reloaded page resumes an answer from, and the reads the page needs for branches.
 */
import type { ChatRequest, CkptChatStore } from '@ckpt/ai-sdk';
import { isCkptError } from '@ckpt/core';
import {
  convertToModelMessages,
  createUIMessageStreamResponse,
  generateId,
  type LanguageModel,
  streamText,
  toUIMessageStream,
  UI_MESSAGE_STREAM_HEADERS,
} from 'ai';
import type { ResumableStreamContext } from 'resumable-stream/ioredis';
import { toolApproval, tools } from './tools.js';

/** What the routes answer with: the model, and the resumable streams, when there is a Redis. */
export interface RouteOptions {
  model: LanguageModel;
  streams?: ResumableStreamContext;
}

/** The handlers of the chat's API on `chats`. */
export function chatRoutes(chats: CkptChatStore, { model, streams }: RouteOptions) {
  return {
    /**
     * `POST /api/chat`: the request useChat sends; the answer streams back and is saved. With
     * resumable streams, the question is saved first and the answer is kept in Redis under a
     * new stream id, recorded as the chat's active stream until the answer is saved.
     */
    async chat(req: Request): Promise<Response> {
      const { id, ...request } = (await req.json()) as { id: string } & ChatRequest;
      const messages = await chats.receive(id, request);
      // A page reloaded mid-answer loads the chat: the question is in it.
      if (streams && messages.at(-1)?.role === 'user') await chats.save(id, messages);
      const result = streamText({
        model,
        messages: await convertToModelMessages(messages, { tools }),
        tools,
        toolApproval,
      });
      const streamId = streams && generateId();
      if (streamId) await chats.startStream(id, streamId);
      let kept: Promise<unknown> = Promise.resolve();
      const response = createUIMessageStreamResponse({
        stream: toUIMessageStream({
          stream: result.stream,
          originalMessages: messages,
          generateMessageId: chats.generateMessageId,
          // Saves the answer, then clears the active stream if it is still this one.
          onEnd: chats.onEnd(id, { streamId }),
        }),
        // A copy of the response, read to its end even when the page goes away.
        consumeSseStream:
          streams && streamId
            ? ({ stream }) => {
                kept = streams.createNewResumableStream(streamId, () => stream);
              }
            : undefined,
      });
      // In Redis before the page sees a word of it, so that a reload at once finds it.
      await kept;
      return response;
    },

    /**
     * `GET /api/chat/:id/stream`: what `useChat({ resume: true })` asks when the page loads. The
     * answer being written for the chat, replayed from its start, from whichever server process
     * runs the model; 204 when no answer is being written.
     */
    async resume(id: string): Promise<Response> {
      const streamId = streams ? await chats.activeStream(id) : null;
      if (!streams || streamId === null) return new Response(null, { status: 204 });
      const stream = await streams.resumeExistingStream(streamId);
      if (!stream) return new Response(null, { status: 204 });
      return new Response(stream.pipeThrough(new TextEncoderStream()), {
        headers: UI_MESSAGE_STREAM_HEADERS,
      });
    },

    /**
     * `GET /api/chat/:id/watch`: server-sent events, one with the active branch each time the
     * chat changes (a message sent from another page, an answer saved by another server
     * process), until the page goes away (`signal`).
     */
    watch(id: string, signal: AbortSignal): Response {
      const encoder = new TextEncoder();
      const events = new ReadableStream<Uint8Array>({
        async start(controller) {
          try {
            for await (const messages of chats.watch(id, { signal })) {
              controller.enqueue(encoder.encode(`data: ${JSON.stringify({ messages })}\n\n`));
            }
            controller.close();
          } catch (err) {
            controller.error(err);
          }
        },
      });
      return new Response(events, {
        headers: { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' },
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
