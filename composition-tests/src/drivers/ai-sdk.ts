/**
 * `@ckpt/ai-sdk`: a chat of one user's `CkptChatStore` (`forUser`), saved as `onEnd` saves it
 * (the whole list of `UIMessage`s: a new turn, an edit of a user message, a regenerated
 * answer) and switched between branches, read as a page reads it: `load(chatId)`, the chat's
 * entry in the user's `list()` (found through the store's tag index, with its tags), and the
 * `siblings` of each message of the active branch (a branch picker), which must name it.
 */
import { CkptChatStore } from '@ckpt/ai-sdk';
import type { UIMessage } from 'ai';
import fc from 'fast-check';
import type { Bound, Driver } from '../driver.js';

type Write =
  | { turn: true }
  /** Edit the `edit`-th user message of the active branch (from the newest, wrapping). */
  | { edit: number }
  /** Answer the `regenerate`-th user message of the active branch again. */
  | { regenerate: number }
  /** Make active the branch ending in the `switchTo`-th leaf of the chat's tree. */
  | { switchTo: number };

type Action = { save: UIMessage[] } | { switchTo: string } | { nothing: true };

const say = (id: string, role: 'user' | 'assistant', text: string): UIMessage => ({
  id,
  role,
  parts: [{ type: 'text', text }],
});

/** The user whose chats the suite writes: each chat is the session `u/<name>`, tagged `user: u`. */
const USER = 'u';

const chats = (on: Bound) => new CkptChatStore(on.store).forUser(USER);
/** The chat's id in its user's chat store: the session's id without the user's prefix. */
const chatOf = (on: Bound) => on.sessionId.slice(USER.length + 1);

/** The `n`-th of `list` counted from its end, wrapping; undefined for an empty list. */
const fromEnd = <T>(list: T[], n: number): T | undefined =>
  list.length === 0 ? undefined : list[list.length - 1 - (n % list.length)];

/** The messages that end a branch of the chat. */
async function leaves(on: Bound): Promise<string[]> {
  const { messages } = await chats(on).tree(chatOf(on));
  const parents = new Set(messages.map((m) => m.parentId));
  return messages.map((m) => m.message.id).filter((id) => !parents.has(id));
}

export const aiSdk: Driver<Write, Action> = {
  name: '@ckpt/ai-sdk',
  scopes: ['ai-sdk.approvals', 'ai-sdk.streams', 'ai-sdk.tagged'],
  sessionId: (name) => `${USER}/${name}`,
  cliWords: (sessionId) => [sessionId],
  write: fc.oneof(
    { weight: 4, arbitrary: fc.constant({ turn: true as const }) },
    { weight: 1, arbitrary: fc.record({ edit: fc.nat(4) }) },
    { weight: 1, arbitrary: fc.record({ regenerate: fc.nat(4) }) },
    { weight: 1, arbitrary: fc.record({ switchTo: fc.nat(4) }) },
  ),
  async prepare(write, on, step) {
    const branch = await chats(on.twin).load(chatOf(on.twin));
    const answer = say(`a${step}`, 'assistant', `answer ${step}`);
    if ('turn' in write)
      return { save: [...branch, say(`u${step}`, 'user', `ask ${step}`), answer] };
    if ('switchTo' in write) {
      // A leaf the store under test still holds: a branch that a prune removed is not there to
      // switch to (the rules allow removing branches that are not active).
      const held = new Set(await leaves(on.real));
      const target = fromEnd(
        (await leaves(on.twin)).filter((id) => held.has(id)),
        write.switchTo,
      );
      return target === undefined ? { nothing: true } : { switchTo: target };
    }
    const users = branch.flatMap((m, i) => (m.role === 'user' ? [i] : []));
    const at = fromEnd(users, 'edit' in write ? write.edit : write.regenerate);
    if (at === undefined) return { nothing: true };
    const before = branch.slice(0, at);
    if ('regenerate' in write) return { save: [...before, branch[at]!, answer] };
    return { save: [...before, say(branch[at]!.id, 'user', `edit ${step}`), answer] };
  },
  async perform(action, on) {
    if ('save' in action) await chats(on).save(chatOf(on), action.save);
    else if ('switchTo' in action) await chats(on).switchBranch(chatOf(on), action.switchTo);
  },
  async read(on) {
    const c = chats(on);
    const chatId = chatOf(on);
    const messages = await c.load(chatId);
    // A KV without `list` has no chat list (`list()` is UNSUPPORTED there, as the README says).
    const entry = on.store.capabilities.listSessions ? await listed(c, chatId) : undefined;
    // Each message of the active branch is among its own siblings.
    const pickers = await Promise.all(
      messages.map(async (m) => (await c.siblings(chatId, m.id)).includes(m.id)),
    );
    const chat =
      entry === undefined
        ? null
        : {
            title: entry.title,
            messageCount: entry.messageCount,
            tags: entry.tags,
            stamp: [entry.createdAt.toISOString(), entry.updatedAt.toISOString()],
          };
    return { current: { messages, chat, pickers }, checkpoints: {} };
  },
};

/** The chat's entry in `list()`, walking its pages. */
async function listed(c: CkptChatStore, chatId: string) {
  let cursor: string | null = null;
  do {
    const page = await c.list({ limit: 100, cursor });
    const found = page.items.find((chat) => chat.chatId === chatId);
    if (found !== undefined) return found;
    cursor = page.cursor;
  } while (cursor !== null);
  return undefined;
}
