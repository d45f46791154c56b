/**
 * The chat's model when no provider is configured: a deterministic one on the AI SDK's own
 * `MockLanguageModelV4`, so that the example runs with no key and no network. It answers
 * "You said: <text>" to a message, calls the `weather` tool when asked about the weather in a
 * city, and words the tool's result when one comes back. It writes a word at a time, with a
 * pause between words when asked, as a real model streams.
 */
import type { LanguageModelV4Prompt, LanguageModelV4StreamPart } from '@ai-sdk/provider';
import { simulateReadableStream } from 'ai';
import { MockLanguageModelV4 } from 'ai/test';

const USAGE = {
  inputTokens: { total: 1, noCache: 1, cacheRead: 0, cacheWrite: 0 },
  outputTokens: { total: 1, text: 1, reasoning: 0 },
};

/** What the model says next, for the prompt it is given. */
export function reply(prompt: LanguageModelV4Prompt): LanguageModelV4StreamPart[] {
  const last = prompt.at(-1);
  const parts: LanguageModelV4StreamPart[] = [{ type: 'stream-start', warnings: [] }];
  const say = (text: string) => {
    parts.push({ type: 'text-start', id: 't' });
    for (const word of text.split(/(?<= )/)) {
      parts.push({ type: 'text-delta', id: 't', delta: word });
    }
    parts.push({ type: 'text-end', id: 't' });
    parts.push({ type: 'finish', usage: USAGE, finishReason: { unified: 'stop', raw: undefined } });
  };
  if (last?.role === 'tool') {
    const result = last.content.find((c) => c.type === 'tool-result');
    const output = result?.type === 'tool-result' ? result.output : undefined;
    const value =
      output?.type === 'text' || output?.type === 'error-text'
        ? output.value
        : JSON.stringify(output);
    say(`The tool said: ${value}`);
    return parts;
  }
  const text =
    last?.role === 'user'
      ? last.content.map((c) => (c.type === 'text' ? c.text : '')).join('')
      : '';
  const city = /weather in (\w+)/i.exec(text)?.[1];
  if (city !== undefined) {
    parts.push({
      type: 'tool-call',
      toolCallId: `call-${city.toLowerCase()}-${prompt.length}`,
      toolName: 'weather',
      input: JSON.stringify({ city }),
    });
    parts.push({
      type: 'finish',
      usage: USAGE,
      finishReason: { unified: 'tool-calls', raw: undefined },
    });
    return parts;
  }
  say(`You said: ${text}`);
  return parts;
}

/** The offline model, pausing `wordDelayMs` (default none) between the parts it writes. */
export function offlineModel(options: { wordDelayMs?: number } = {}): MockLanguageModelV4 {
  return new MockLanguageModelV4({
    doStream: async ({ prompt }) => ({
      stream: simulateReadableStream({
        chunks: reply(prompt),
        initialDelayInMs: null,
        chunkDelayInMs: options.wordDelayMs ?? null,
      }),
    }),
  });
}
