/**
 * Chats: `@ckpt/ai-sdk` against the AI SDK docs' persistence recipe, which keeps a chat's whole
 * `UIMessage[]` as one JSON value (here a text column of a table in the same database) and
 * rewrites it on each save. On SQLite and PostgreSQL, for chats of 10, 1,000 and 10,000
 * messages of 1 KiB: saving one turn (a question and its answer, given as `onEnd` gives them:
 * the whole list) and loading the newest 50 messages (the recipe reads the whole value).
 *
 * ckpt's three chat lengths run interleaved, so that its growth with the chat is measured under
 * the same conditions; the recipe runs after, a length at a time, the database settled in
 * between. Interleaved with ckpt, the recipe's writes of up to 10 MB would be paid partly by
 * ckpt's next commit (SQLite folds the WAL back into the file when it has grown, PostgreSQL
 * writes the dirty pages out), and partly by the other lengths of its own.
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

/** The recipe's calls on one database, and how to let that database settle. */
interface Database {
  name: string;
  store: CheckpointStore;
  recipe: Recipe;
  settle(): Promise<unknown> | unknown;
}

/** The chat rows for `backends` (of sqlite and postgres), at each of `lengths`. */
export async function benchChats(
  backends: string[],
  dir: string,
  postgresUrl: string,
  plan: Plan,
  lengths: number[],
): Promise<ChatRow[]> {
  const chats: Chat[] = [];
  for (const length of lengths) chats.push({ length, ...(await buildChat(length)) });
  const rows: ChatRow[] = [];

  if (backends.includes('sqlite')) {
    const backend = sqlite({ path: join(dir, 'chats.db') });
    // The recipe's table, in the same database file, on the same connection.
    backend.db.exec('CREATE TABLE recipe_chats (chat_id TEXT PRIMARY KEY, messages TEXT NOT NULL)');
    const upsert = backend.db.prepare(
      'INSERT INTO recipe_chats VALUES (?, ?) ON CONFLICT (chat_id) DO UPDATE SET messages = excluded.messages',
    );
    const select = backend.db
      .prepare('SELECT messages FROM recipe_chats WHERE chat_id = ?')
      .pluck();
    const store = new CheckpointStore(backend);
    try {
      rows.push(
        ...(await onDatabase(
          {
            name: 'sqlite',
            store,
            recipe: {
              write: (chatId, json) => upsert.run(chatId, json),
              read: (chatId) => select.get(chatId) as string,
            },
            settle: () => backend.db.pragma('wal_checkpoint(TRUNCATE)'),
          },
          chats,
          plan,
        )),
      );
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
      const table = `${namespace}.recipe_chats`;
      await pool.query(`CREATE TABLE ${table} (chat_id text PRIMARY KEY, messages text NOT NULL)`);
      rows.push(
        ...(await onDatabase(
          {
            name: 'postgres',
            store,
            recipe: {
              write: (chatId, json) =>
                pool.query(
                  `INSERT INTO ${table} VALUES ($1, $2)
                   ON CONFLICT (chat_id) DO UPDATE SET messages = excluded.messages`,
                  [chatId, json],
                ),
              read: async (chatId) =>
                (
                  await pool.query(`SELECT messages FROM ${table} WHERE chat_id = $1`, [chatId])
                ).rows[0].messages,
            },
            settle: async () => {
              await pool.query(`VACUUM ${table}`);
              await pool.query('CHECKPOINT');
            },
          },
          chats,
          plan,
        )),
      );
    } finally {
      await store.close();
      await pool.query(`DROP SCHEMA IF EXISTS ${namespace} CASCADE`).catch(() => {});
      await pool.end();
    }
  }
  return rows;
}

/** A chat built for the benchmark. */
interface Chat {
  length: number;
  messages: UIMessage[];
  session: SessionExport;
  checkpoints: ExportedCheckpoint[];
}

/** Both operations, ckpt's and the recipe's, on one database, for each chat. */
async function onDatabase(db: Database, chats: Chat[], plan: Plan): Promise<ChatRow[]> {
  const { store, recipe } = db;
  const chatStore = new CkptChatStore(store);
  // Saves are measured in short rounds: the chats grow by a turn a save, and are put back to
  // their length after each round (ckpt's head goes back; the turns stay on branches of their
  // own; the recipe's value is written again).
  const savePlan: Plan = {
    ...plan,
    rounds: Math.max(2, Math.round((plan.rounds * plan.perRound) / SAVES_PER_ROUND / 5)),
    perRound: SAVES_PER_ROUND,
  };
  // The recipe's saves of 10,000 messages take most of a second: fewer of them.
  const recipePlan: Plan = {
    ...savePlan,
    rounds: Math.max(2, Math.round(savePlan.rounds / 4)),
    warmup: 5,
  };
  let turn = 0;
  const nextTurn = () => {
    turn++;
    return [message(`t${turn}q`, 'user'), message(`t${turn}a`, 'assistant')];
  };
  const setups: {
    chat: Chat;
    id: string;
    head: number;
    ours: UIMessage[];
    theirs: UIMessage[];
  }[] = [];
  for (const chat of chats) {
    const id = `chat-${chat.length}`;
    await store.importSession({ ...chat.session, sessionId: id, checkpoints: chat.checkpoints });
    await recipe.write(id, JSON.stringify(chat.messages));
    // Each save brings the chat as onEnd gives it: everything before, and the new turn.
    setups.push({
      chat,
      id,
      head: (await store.head(id))!,
      ours: [...chat.messages],
      theirs: [...chat.messages],
    });
  }
  await db.settle();

  const ckptSaves = await interleaved(
    setups.map((s) => ({
      name: String(s.chat.length),
      op: async () => {
        s.ours.push(...nextTurn());
        await chatStore.save(s.id, s.ours);
      },
    })),
    savePlan,
    async () => {
      for (const s of setups) {
        s.ours.length = s.chat.length;
        await store.rollback(s.id, s.head);
      }
    },
  );
  await db.settle();
  const ckptLoads = await interleaved(
    setups.map((s) => ({
      name: String(s.chat.length),
      op: () => chatStore.messages(s.id, { limit: 50 }),
    })),
    plan,
  );
  await db.settle();

  const rows: ChatRow[] = [];
  for (const s of setups) {
    const reset = async () => {
      s.theirs.length = s.chat.length;
      await recipe.write(s.id, JSON.stringify(s.chat.messages));
    };
    const save = await interleaved(
      [
        {
          name: 'recipe',
          op: async () => {
            s.theirs.push(...nextTurn());
            await recipe.write(s.id, JSON.stringify(s.theirs));
          },
        },
      ],
      recipePlan,
      reset,
    );
    await db.settle();
    const load = await interleaved(
      [
        {
          name: 'recipe',
          op: async () => (JSON.parse(await recipe.read(s.id)) as UIMessage[]).slice(-50),
        },
      ],
      recipePlan,
    );
    await db.settle();
    const of = String(s.chat.length);
    rows.push(
      {
        backend: db.name,
        messages: s.chat.length,
        operation: 'save a turn',
        ckpt: ckptSaves.get(of)!,
        recipe: save.get('recipe')!,
      },
      {
        backend: db.name,
        messages: s.chat.length,
        operation: 'load newest 50',
        ckpt: ckptLoads.get(of)!,
        recipe: load.get('recipe')!,
      },
    );
    await store.delete(s.id);
  }
  return rows;
}

/**
 * Print the chat rows: medians side by side, and ckpt's against its own at the shortest chat
 * and at 1,000 messages (the shortest that fills a page of 50, so that a load reads as many
 * messages on both sides).
 */
export function printChats(rows: ChatRow[]): void {
  if (rows.length === 0) return;
  const at = (r: ChatRow, messages: number | undefined) =>
    rows.find(
      (s) =>
        s.backend === r.backend &&
        s.operation === r.operation &&
        (messages === undefined || s.messages === messages),
    );
  const versus = (r: ChatRow, other: ChatRow | undefined) =>
    other === undefined ? '' : `${fmt(r.ckpt.p50Us / other.ckpt.p50Us, 2)}x`;
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
      'ckpt / 1,000',
    ],
    rows.map((r) => [
      r.backend,
      r.operation,
      fmt(r.messages),
      fmt(r.ckpt.p50Us, 1),
      fmt(r.recipe.p50Us, 1),
      `${fmt(r.recipe.p50Us / r.ckpt.p50Us, 1)}x`,
      versus(r, at(r, undefined)),
      versus(r, at(r, 1_000)),
    ]),
    2,
  );
}
