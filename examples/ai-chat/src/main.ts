/** `pnpm start`: the example on http://127.0.0.1:3000, its chats in `.data/chats.db`. */
import { mkdirSync } from 'node:fs';
import { fileURLToPath } from 'node:url';
import { startServer } from './server.js';

const data = fileURLToPath(new URL('../.data/', import.meta.url));
mkdirSync(data, { recursive: true });
const server = await startServer({
  dbPath: `${data}chats.db`,
  port: Number(process.env.PORT ?? 3000),
});
console.log(`The chat is at ${server.url} (its chats in ${data}chats.db)`);
