/**
 * Resumable answers across server processes, over HTTP as the page sends them: one server
 * process streams a slow answer; its page goes away mid-answer; a second server process, on the
 * same SQLite file and Redis, answers `GET /api/chat/:id/stream` with the whole answer, from its
 * start to its end. Once the answer is saved, the chat has no active stream and GET answers 204.
 * The answer is in Redis before the response goes out, so a GET right after it finds it; and
 * without Redis, the routes answer as before, with nothing to resume.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CkptChatStore } from '@ckpt/ai-sdk';
import { serviceListening, serviceUrl } from '@ckpt/test-servers';
import type { UIMessage } from 'ai';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { offlineModel } from '../src/offline-model.js';
import { chatRoutes } from '../src/routes.js';
import { type ChatServer, startServer } from '../src/server.js';
import { openStreams } from '../src/streams.js';
import { type ServerProcess, startServerProcess } from './support/server-process.js';
import { removeStreamKeys } from './support/stream-keys.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-ai-chat-resume-'));
const streamOptions = {
  redisUrl: serviceUrl('redis'),
  keyPrefix: `ckpt-test-resume-${process.pid}`,
};
const redisUp = await serviceListening('redis');

let first: ChatServer;
let second: ServerProcess;

beforeAll(async () => {
  if (!redisUp) return;
  const dbPath = join(dir, 'chats.db');
  // The model writes a part every 40 ms: a 40-word answer takes about two seconds.
  first = await startServer({ dbPath, streams: streamOptions, wordDelayMs: 40 });
  second = await startServerProcess({ dbPath, streams: streamOptions });
}, 120_000);

afterAll(async () => {
  await second?.close();
  await first?.close();
  if (redisUp) await removeStreamKeys(streamOptions.redisUrl, streamOptions.keyPrefix);
  rmSync(dir, { recursive: true, force: true });
});

/** The UI message chunks of a server-sent event stream, as useChat reads them. */
function chunksOf(body: string): { type: string; delta?: string }[] {
  return body
    .split('\n')
    .filter((line) => line.startsWith('data: {'))
    .map((line) => JSON.parse(line.slice('data: '.length)));
}

const textOf = (chunks: { type: string; delta?: string }[]) =>
  chunks.map((chunk) => (chunk.type === 'text-delta' ? chunk.delta : '')).join('');

/** `POST /api/chat` as the page sends it: the chat's id and its new message. */
function send(url: string, id: string, message: UIMessage): Promise<Response> {
  return fetch(`${url}/api/chat`, {
    method: 'POST',
    headers: { 'content-type': 'application/json' },
    body: JSON.stringify({ id, message, trigger: 'submit-message' }),
  });
}

const resume = (url: string, id: string) => fetch(`${url}/api/chat/${id}/stream`);

/** The request of a first question `text` in chat `id`, for a route called in this process. */
function question(id: string, text: string): Request {
  const message: UIMessage = { id: 'q1', role: 'user', parts: [{ type: 'text', text }] };
  return new Request('http://localhost/api/chat', {
    method: 'POST',
    body: JSON.stringify({ id, message }),
  });
}

describe.skipIf(!redisUp)('resumable answers across server processes', () => {
  it('replays an answer being written in another process, whole, then answers 204', async () => {
    const id = 'resume-across';
    expect((await resume(second.url, id)).status).toBe(204);

    const question = Array.from({ length: 40 }, (_, i) => `word${i}`).join(' ');
    const message: UIMessage = {
      id: 'q1',
      role: 'user',
      parts: [{ type: 'text', text: question }],
    };
    const response = await send(first.url, id, message);
    expect(response.status).toBe(200);
    // The page goes away (a reload) as soon as the answer begins, and asks for it again, from
    // the other server process.
    await response.body!.cancel();
    const resumed = await resume(second.url, id);
    expect(resumed.status).toBe(200);
    expect(resumed.headers.get('content-type')).toBe('text/event-stream');
    // Mid-answer: the question is saved, the answer is not, and the stream is the chat's.
    expect((await first.chats.load(id)).map((m) => m.role)).toEqual(['user']);
    expect(await first.chats.activeStream(id)).toEqual(expect.any(String));
    const chunks = chunksOf(await resumed.text());
    expect(chunks[0]?.type).toBe('start');
    expect(chunks.at(-1)?.type).toBe('finish');
    expect(textOf(chunks)).toBe(`You said: ${question}`);

    // The answer is saved and its stream cleared: nothing to resume, from either process.
    expect(await first.chats.activeStream(id)).toBeNull();
    expect((await resume(second.url, id)).status).toBe(204);
    expect((await resume(first.url, id)).status).toBe(204);
    const saved = await first.chats.load(id);
    expect(saved.map((m) => m.role)).toEqual(['user', 'assistant']);
    expect(saved[1]!.parts).toContainEqual(
      expect.objectContaining({ type: 'text', text: `You said: ${question}` }),
    );
  });

  it('has the answer in Redis before the response goes out, so a reload at once finds it', async () => {
    // The route on connections to Redis that are still being made, as in a process just started.
    const streams = openStreams(streamOptions);
    const model = offlineModel({ wordDelayMs: 40 });
    const routes = chatRoutes(first.chats, { model, streams: streams.context });
    const id = 'resume-at-once';
    const response = await routes.chat(question(id, 'hi'));
    const resumed = await routes.resume(id);
    expect(resumed.status).toBe(200);
    expect(textOf(chunksOf(await resumed.text()))).toBe('You said: hi');
    await response.text();
    await streams.close();
  });
});

describe('without Redis', () => {
  it('answers, keeps no stream id, and has nothing to resume', async () => {
    const chats = await CkptChatStore.open(`sqlite:${join(dir, 'no-redis.db')}`);
    const routes = chatRoutes(chats, { model: offlineModel() });
    const response = await routes.chat(question('plain', 'hi'));
    expect(textOf(chunksOf(await response.text()))).toBe('You said: hi');
    expect(await chats.activeStream('plain')).toBeNull();
    expect((await routes.resume('plain')).status).toBe(204);
    expect((await chats.load('plain')).map((m) => m.role)).toEqual(['user', 'assistant']);
    await chats.close();
  });
});
