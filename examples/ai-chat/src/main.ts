/**
 * `pnpm start`: the example on http://127.0.0.1:3000, its chats in `.data/chats.db`; with
 * `REDIS_URL`, answers resume after a reload. The offline model writes a word every
 * `AI_CHAT_WORD_DELAY_MS` (default 50), as a model streams.
 */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startServer } from './server.js';

const data = fileURLToPath(new URL('../.data/', import.meta.url));
mkdirSync(data, { recursive: true });
const redisUrl = process.env.REDIS_URL;
const server = await startServer({
  dbPath: `${data}chats.db`,
  port: Number(process.env.PORT ?? 3000),
  streams: redisUrl ? { redisUrl } : undefined,
  wordDelayMs: Number(process.env.AI_CHAT_WORD_DELAY_MS ?? 50),
});
console.log(`The chat is at ${server.url} (its chats in ${data}chats.db)`);
if (!redisUrl) console.log('Set REDIS_URL to resume an answer after a reload.');
