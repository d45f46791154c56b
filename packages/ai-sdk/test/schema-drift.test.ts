/**
 * Chats that never brick, on every backend: messages saved under an older message schema load
 * under the new one through the application's upgrade functions, and a message that still
 * fails (a removed tool, a failed tool call, a tool call cut off mid-stream, a version without
 * an upgrade) loads as the `onInvalid` policy says. What is stored never changes by a load.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import type { LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { CkptChatStore, type CkptChatStoreOptions, type InvalidMessage } from '@ckpt/ai-sdk';
import { type CheckpointStore, isCkptError } from '@ckpt/core';
import { STORES, storesOn } from '@ckpt/test-stores';
import {
  convertToModelMessages,
  streamText,
  type ToolSet,
  tool,
  toUIMessageStream,
  type UIMessage,
} from 'ai';
import { MockLanguageModelV4 } from 'ai/test';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { z } from 'zod';
import { answer, send, textOf, toolStates, tools, user } from './support/route.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-ai-sdk-drift-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Version 2 of the weather tool: its input names the place `location`. */
const toolsV2: ToolSet = {
  weather: tool({
    inputSchema: z.object({ location: z.string() }),
    execute: async ({ location }: { location: string }) => `sunny in ${location}`,
  }),
};

/** The upgrade from version 1: the weather tool's `city` became `location`. */
function cityToLocation(message: UIMessage): UIMessage {
  return {
    ...message,
    parts: message.parts.map((part) => {
      if (part.type !== 'tool-weather' || !('input' in part)) return part;
      const { city, ...rest } = part.input as { city: string };
      return { ...part, input: { ...rest, location: city } } as typeof part;
    }),
  };
}

/** Everything stored for a chat, to compare before and after loads. */
async function stored(store: CheckpointStore, id: string): Promise<unknown[]> {
  const exported = await store.exportSession(id);
  const all: unknown[] = [];
  for await (const cp of exported!.checkpoints) all.push(cp);
  return all;
}

/** A turn whose stream is cut off while the model is still writing a tool call's input. */
async function cutOffTurn(chats: CkptChatStore, id: string, message: UIMessage): Promise<void> {
  const stop = new AbortController();
  const model = new MockLanguageModelV4({
    doStream: async () => ({
      stream: new ReadableStream<LanguageModelV4StreamPart>({
        async start(controller) {
          controller.enqueue({ type: 'stream-start', warnings: [] });
          controller.enqueue({ type: 'tool-input-start', id: 'call-cut', toolName: 'weather' });
          controller.enqueue({ type: 'tool-input-delta', id: 'call-cut', delta: '{"ci' });
          await new Promise((resolve) => setTimeout(resolve, 20));
          stop.abort();
        },
      }),
    }),
  });
  const history = await chats.receive(id, { message });
  const result = streamText({
    model,
    messages: await convertToModelMessages(history),
    tools,
    abortSignal: stop.signal,
  });
  const saved = new Promise<void>((resolve, reject) => {
    const save = chats.onEnd(id);
    const stream = toUIMessageStream({
      stream: result.stream,
      originalMessages: history,
      generateMessageId: chats.generateMessageId,
      onEnd: (event) => save(event).then(resolve, reject),
    });
    stream.pipeTo(new WritableStream()).catch(() => {});
  });
  await saved;
}

describe.each(STORES)('schema drift on $name', (backend) => {
  const stores = storesOn(backend, 'ai_sdk_drift', dir, ['ai-sdk.approvals', 'ai-sdk.streams']);
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);
  let store: CheckpointStore;
  let id: string;
  let made = 0;
  const chatsWith = (options: CkptChatStoreOptions = {}) => new CkptChatStore(store, options);
  beforeEach(async () => {
    store = await stores.open();
    id = `drift-${backend.name.replace(/\W/g, '')}-${made++}`;
  });

  /** A chat saved under version 1: a weather question, approved, answered. */
  async function weatherChatV1(): Promise<void> {
    const v1 = chatsWith({ tools });
    await send(v1, id, { message: user('u1', 'weather in Porto?') });
    const asked = (await v1.load(id)).at(-1)!;
    await send(v1, id, { message: answer(asked, true), messageId: asked.id });
  }

  it("loads a chat saved with tool schema v1 under v2 through the application's upgrade", async () => {
    await weatherChatV1();
    const before = await stored(store, id);
    const v2 = chatsWith({ version: 2, tools: toolsV2, upgrades: { 1: cityToLocation } });
    const [, answered] = await v2.load(id);
    expect(answered!.parts.find((p) => p.type === 'tool-weather')).toMatchObject({
      state: 'output-available',
      input: { location: 'Porto' },
      output: 'sunny in Porto',
    });
    // The chat goes on under v2; new messages are stored as version 2.
    await send(v2, id, { message: user('u2', 'thanks') }, { tools: toolsV2 });
    const newest = await store.transcript(id, { limit: 1 });
    expect(newest.items[0]!.item).toMatchObject({ role: 'assistant', ckpt: { version: 2 } });
    expect((await stored(store, id)).slice(0, before.length)).toEqual(before);
  });

  it("loads a removed tool's parts as dynamic tool parts, and the chat goes on", async () => {
    await weatherChatV1();
    const before = await stored(store, id);
    const withoutWeather = chatsWith({ tools: {}, onInvalid: 'throw' });
    const [, answered] = await withoutWeather.load(id);
    expect(answered!.parts.find((p) => p.type === 'dynamic-tool')).toMatchObject({
      toolName: 'weather',
      state: 'output-available',
    });
    const history = await withoutWeather.receive(id, { message: user('u2', 'and now?') });
    await expect(convertToModelMessages(history)).resolves.toHaveLength(5);
    expect(await stored(store, id)).toEqual(before);
  });

  it('loads a tool call that failed (output-error) under a changed tool schema', async () => {
    const v1 = chatsWith({ tools });
    await v1.save(id, [
      user('u1', 'weather in Porto?'),
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          {
            type: 'tool-weather',
            toolCallId: 'call-1',
            state: 'output-error',
            input: { city: 'Porto' },
            errorText: 'the weather service is down',
          },
        ],
      },
    ]);
    const before = await stored(store, id);
    const [, failed] = await chatsWith({ tools: toolsV2, onInvalid: 'throw' }).load(id);
    expect(failed!.parts[0]).toMatchObject({
      state: 'output-error',
      errorText: 'the weather service is down',
    });
    expect(await stored(store, id)).toEqual(before);
  });

  describe('a tool call cut off mid-stream', () => {
    beforeEach(async () => {
      await cutOffTurn(chatsWith({ tools }), id, user('u1', 'weather in Porto?'));
    });

    it('is stored as the stream left it', async () => {
      const items = (await store.transcript(id)).items.map((e) => e.item) as unknown as UIMessage[];
      expect(toolStates(items[0])).toEqual(['input-streaming']);
    });

    it('loads without the cut-off part, or as the placeholder when nothing else is left', async () => {
      const before = await stored(store, id);
      const loaded = await chatsWith({ tools }).load(id);
      expect(loaded.map((m) => m.id)).toHaveLength(2);
      expect(toolStates(loaded[1])).toEqual([]);
      expect(textOf(loaded[1]!)).toBe('[This message could not be loaded.]');
      expect(await stored(store, id)).toEqual(before);
    });

    it('loads as the placeholder the application chose', async () => {
      const loaded = await chatsWith({
        tools,
        onInvalid: 'placeholder',
        placeholder: '(interrupted)',
      }).load(id);
      expect(textOf(loaded[1]!)).toBe('(interrupted)');
    });

    it('refuses to load with SCHEMA when the policy is to throw', async () => {
      await expect(chatsWith({ tools, onInvalid: 'throw' }).load(id)).rejects.toSatisfy((err) =>
        isCkptError(err, 'SCHEMA'),
      );
    });

    it("loads as the application's own function says", async () => {
      const seen: InvalidMessage[] = [];
      const loaded = await chatsWith({
        tools,
        onInvalid: (failure) => {
          seen.push(failure);
          return null;
        },
      }).load(id);
      expect(loaded.map((m) => m.role)).toEqual(['user']);
      expect(seen.map((f) => f.reason)).toEqual(['unfinished-tool']);
    });

    it('lets the chat go on', async () => {
      const chats = chatsWith({ tools });
      await send(chats, id, { message: user('u2', 'hello?') });
      expect(textOf((await chats.load(id)).at(-1)!)).toBe('You said: hello?');
    });
  });

  it('shows a message without its upgrade, or of a newer version, as the placeholder', async () => {
    await chatsWith({ version: 2 }).save(id, [user('u1', 'saved by version 2')]);
    const before = await stored(store, id);
    const older = await chatsWith({ version: 1 }).load(id);
    expect(textOf(older[0]!)).toBe('[This message could not be loaded.]');
    expect(older[0]!.id).toBe('u1');
    const reasons: string[] = [];
    await chatsWith({
      version: 3,
      onInvalid: (failure) => {
        reasons.push(failure.reason);
        return failure.stored;
      },
    }).load(id);
    expect(reasons).toEqual(['upgrade-failed']);
    await expect(chatsWith({ version: 3, onInvalid: 'throw' }).load(id)).rejects.toSatisfy((err) =>
      isCkptError(err, 'SCHEMA'),
    );
    expect(await stored(store, id)).toEqual(before);
  });

  it('validates metadata against the metadata schema, through its upgrade', async () => {
    await chatsWith().save(id, [
      { ...user('u1', 'hello'), metadata: { sentAt: 1_700_000_000_000 } },
    ]);
    const metadataSchema = z.object({ sentAt: z.string() });
    const upgraded = await chatsWith({
      version: 2,
      metadataSchema,
      upgrades: {
        1: (m) => ({
          ...m,
          metadata: { sentAt: new Date((m.metadata as { sentAt: number }).sentAt).toISOString() },
        }),
      },
    }).load(id);
    expect(upgraded[0]!.metadata).toEqual({ sentAt: '2023-11-14T22:13:20.000Z' });
    // Without the upgrade, the message whose metadata fails becomes the placeholder.
    const failing = await chatsWith({ metadataSchema }).load(id);
    expect(textOf(failing[0]!)).toBe('[This message could not be loaded.]');
  });

  it('drops only the part that fails validation when the others are valid', async () => {
    await chatsWith().save(id, [
      {
        id: 'a1',
        role: 'assistant',
        parts: [
          { type: 'text', text: 'kept' },
          { type: 'data-chart', data: { points: 'not numbers' } },
        ],
      },
    ]);
    const [loaded] = await chatsWith({
      dataSchemas: { chart: z.object({ points: z.array(z.number()) }) },
    }).load(id);
    expect(loaded!.parts).toEqual([{ type: 'text', text: 'kept' }]);
  });
});
