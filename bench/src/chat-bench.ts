/**
 * Chats: `@ckpt/ai-sdk` against the AI SDK docs' persistence recipe, which keeps a chat's whole
 * `UIMessage[]` as one JSON value (here a text column of a table in the same database) and
 * rewrites it on each save. On SQLite and PostgreSQL, for chats of 10, 1,000 and 10,000
 * messages of 1 KiB: saving one turn (a question and its answer, given as `onEnd` gives them:
 * the whole list) and loading the newest 50 messages (the recipe reads the whole value).
 */
import { join } from 'node:path';
import { CkptChatStore } from '@ckpt/ai-sdk';
import { CheckpointStore, type ExportedCheckpoint, type SessionExport } from '@ckpt/core';
import { memory } from '@ckpt/memory';
import { postgres } from '@ckpt/postgres';
import { sqlite } from '@ckpt/sqlite';
import type { UIMessage } from 'ai';
import pg from 'pg';
import { interleaved, type Plan, type Stats } from './measure.js';
import { fmt, printGrid } from './report.js';

/** One line of the chat table: one operation on chats of one length, both ways. */
export interface ChatRow {
  backend: string;
  messages: number;
  operation: 'save a turn' | 'load newest 50';
  ckpt: Stats;
  recipe: Stats;
}

/** The recipe's two calls on one database. */
interface Recipe {
  write(chatId: string, json: string): Promise<unknown> | unknown;
  read(chatId: string): Promise<string> | string;
}

const MESSAGE_BYTES = 1024;
const WORDS = 'The assistant looked at the plan, checked the dates and wrote back. ';
/** Saves of one round: the chats grow by two messages a save, and are reset after each round. */
const SAVES_PER_ROUND = 10;
const stamp = Date.now().toString(36);

/** A message whose JSON is 1 KiB long. */
function message(id: string, role: 'user' | 'assistant'): UIMessage {
  const bare = JSON.stringify({ id, role, parts: [{ type: 'text', text: '' }] }).length;
  const text = WORDS.repeat(Math.ceil(MESSAGE_BYTES / WORDS.length)).slice(0, MESSAGE_BYTES - bare);
  return { id, role, parts: [{ type: 'text', text }] };
}

/** A chat of `length` messages saved turn by turn (in memory), and its export. */
async function buildChat(
  length: number,
): Promise<{ messages: UIMessage[]; session: SessionExport; checkpoints: ExportedCheckpoint[] }> {
  const store = new CheckpointStore(memory());
  const chats = new CkptChatStore(store);
  const messages: UIMessage[] = [];
  for (let i = 0; i < length; i += 2) {
    messages.push(message(`m${i}`, 'user'), message(`m${i + 1}`, 'assistant'));
    await chats.save('chat', messages);
  }
  const session = (await store.exportSession('chat'))!;
  const checkpoints: ExportedCheckpoint[] = [];
  for await (const cp of session.checkpoints) checkpoints.push(cp);
  return { messages, session, checkpoints };
}

/** The chat rows for `backends` (of sqlite and postgres), at each of `lengths`. */
export async function benchChats(
  backends: string[],
  dir: string,
  postgresUrl: string,
  plan: Plan,
  lengths: number[],
): Promise<ChatRow[]> {
  const chatPlan: Plan = {
    ...plan,
    rounds: Math.max(2, Math.round((plan.rounds * plan.perRound) / SAVES_PER_ROUND / 5)),
    perRound: SAVES_PER_ROUND,
  };
  const built = [];
  for (const length of lengths) built.push({ length, ...(await buildChat(length)) });
  const rows: ChatRow[] = [];

  if (backends.includes('sqlite')) {
    const backend = sqlite({ path: join(dir, 'chats.db') });
    const store = new CheckpointStore(backend);
    // The recipe's table, in the same database file, on the same connection.
    backend.db.exec('CREATE TABLE recipe_chats (chat_id TEXT PRIMARY KEY, messages TEXT NOT NULL)');
    const upsert = backend.db.prepare(
      'INSERT INTO recipe_chats VALUES (?, ?) ON CONFLICT (chat_id) DO UPDATE SET messages = excluded.messages',
    );
    const select = backend.db
      .prepare('SELECT messages FROM recipe_chats WHERE chat_id = ?')
      .pluck();
    const recipe: Recipe = {
      write: (chatId, json) => upsert.run(chatId, json),
      read: (chatId) => select.get(chatId) as string,
    };
    try {
      for (const chat of built)
        rows.push(...(await onBackend('sqlite', store, recipe, chat, chatPlan)));
    } finally {
      await store.close();
    }
  }

  if (backends.includes('postgres')) {
    const pool = new pg.Pool({ connectionString: postgresUrl, max: 4 });
    const namespace = `bench_${stamp}_chats`;
    const store = new CheckpointStore(postgres({ pool, namespace }));
    try {
      await store.head('warm-up'); // runs the migration
      // The recipe's table, in the same database, on the same pool.
      await pool.query(
        `CREATE TABLE ${namespace}.recipe_chats (chat_id text PRIMARY KEY, messages text NOT NULL)`,
      );
      const recipe: Recipe = {
        write: (chatId, json) =>
          pool.query(
            `INSERT INTO ${namespace}.recipe_chats VALUES ($1, $2)
             ON CONFLICT (chat_id) DO UPDATE SET messages = excluded.messages`,
            [chatId, json],
          ),
        read: async (chatId) =>
          (
            await pool.query(`SELECT messages FROM ${namespace}.recipe_chats WHERE chat_id = $1`, [
              chatId,
            ])
          ).rows[0].messages,
      };
      for (const chat of built)
        rows.push(...(await onBackend('postgres', store, recipe, chat, chatPlan)));
    } finally {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS ${namespace} CASCADE`).catch(() => {});
      await pool.end();
    }
  }
  return rows;
}

/** Both operations on one backend, for one chat length. */
async function onBackend(
  backend: string,
  store: CheckpointStore,
  recipe: Recipe,
  chat: {
    length: number;
    messages: UIMessage[];
    session: SessionExport;
    checkpoints: ExportedCheckpoint[];
  },
  plan: Plan,
): Promise<ChatRow[]> {
  const id = `chat-${chat.length}`;
  await store.importSession({ ...chat.session, sessionId: id, checkpoints: chat.checkpoints });
  await recipe.write(id, JSON.stringify(chat.messages));
  const chats = new CkptChatStore(store);
  const startHead = (await store.head(id))!;

  // Each save brings the chat as onEnd gives it: everything before, and the new turn.
  const ours = [...chat.messages];
  const theirs = [...chat.messages];
  let turn = 0;
  const next = () => {
    turn++;
    return [message(`t${turn}q`, 'user'), message(`t${turn}a`, 'assistant')];
  };
  const saves = await interleaved(
    [
      {
        name: 'ckpt',
        op: async () => {
          ours.push(...next());
          await chats.save(id, ours);
        },
      },
      {
        name: 'recipe',
        op: async () => {
          theirs.push(...next());
          await recipe.write(id, JSON.stringify(theirs));
        },
      },
    ],
    plan,
    // Back to the chat's length after each round: ckpt's head goes back (the turns stay on
    // branches of their own), the recipe's value is written again.
    async () => {
      ours.length = chat.length;
      theirs.length = chat.length;
      await store.rollback(id, startHead);
      await recipe.write(id, JSON.stringify(chat.messages));
    },
  );
  const loads = await interleaved(
    [
      { name: 'ckpt', op: () => chats.messages(id, { limit: 50 }) },
      {
        name: 'recipe',
        op: async () => (JSON.parse(await recipe.read(id)) as UIMessage[]).slice(-50),
      },
    ],
    plan,
  );
  await store.delete(id);
  const row = (operation: ChatRow['operation'], stats: Map<string, Stats>): ChatRow => ({
    backend,
    messages: chat.length,
    operation,
    ckpt: stats.get('ckpt')!,
    recipe: stats.get('recipe')!,
  });
  return [row('save a turn', saves), row('load newest 50', loads)];
}

/** Print the chat rows: medians side by side, and how ckpt's grow with the chat. */
export function printChats(rows: ChatRow[]): void {
  if (rows.length === 0) return;
  const shortest = (r: ChatRow) =>
    rows.find((s) => s.backend === r.backend && s.operation === r.operation)!;
  printGrid(
    'Chats: @ckpt/ai-sdk against the recipe (the whole UIMessage[] as one JSON value, rewritten each save), 1 KiB messages',
    [
      'backend',
      'operation',
      'messages',
      'ckpt p50 µs',
      'recipe p50 µs',
      'recipe / ckpt',
      'ckpt / shortest',
    ],
    rows.map((r) => [
      r.backend,
      r.operation,
      fmt(r.messages),
      fmt(r.ckpt.p50Us, 1),
      fmt(r.recipe.p50Us, 1),
      `${fmt(r.recipe.p50Us / r.ckpt.p50Us, 1)}x`,
      `${fmt(r.ckpt.p50Us / shortest(r).ckpt.p50Us, 2)}x`,
    ]),
    2,
  );
}
