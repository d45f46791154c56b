/**
 * Every call of `CkptChatStore` on every backend, driven as an application drives it: requests
 * shaped as `useChat` sends them with the "send only the last message" transport, `streamText`
 * on the AI SDK's mock model, and `toUIMessageStream` whose `onEnd` saves the chat.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CkptChatStore } from '@ckpt/ai-sdk';
import { type CheckpointStore, isCkptError } from '@ckpt/core';
import { STORES, storesOn } from '@ckpt/test-stores';
import type { UIMessage } from 'ai';
import { afterAll, afterEach, beforeEach, describe, expect, it, vi } from 'vitest';
import { answer, assistant, runs, send, textOf, toolStates, tools, user } from './support/route.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-ai-sdk-chats-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SCOPES = ['ai-sdk.approvals', 'ai-sdk.streams', 'ai-sdk.tagged'];
const refused = (code: string) => (err: unknown) => isCkptError(err, code as never);
const refusedAt = (path: string) => (err: unknown) =>
  isCkptError(err, 'INVALID_ARGUMENT') &&
  err.details.argument === path &&
  err.message.startsWith(`${path} `);
const texts = (messages: UIMessage[]) => messages.map((m) => `${m.role}: ${textOf(m)}`);
let made = 0;

describe.each(STORES)('CkptChatStore on $name', (backend) => {
  const stores = storesOn(backend, 'ai_sdk_chats', dir, SCOPES);
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);
  let store: CheckpointStore;
  let chats: CkptChatStore;
  let id: string;
  beforeEach(async () => {
    store = await stores.open();
    chats = new CkptChatStore(store, { tools });
    id = `chat-${made++}`;
  });

  describe('watch', () => {
    it('gives the active branch after each change another store makes, and [] once it is deleted', async () => {
      if (!store.capabilities.watch) {
        await expect(chats.watch(id).ready).rejects.toSatisfy(refused('UNSUPPORTED'));
        return;
      }
      const other = new CkptChatStore(await stores.open(), { tools });
      const changes = chats.watch(id);
      await changes.ready;
      const turn = ['user: hello', 'assistant: You said: hello'];
      const seen: string[][] = [];
      const following = (async () => {
        for await (const messages of changes) {
          seen.push(texts(messages));
          if (messages.length === 0 && seen.some((s) => s.length === turn.length)) break;
        }
      })();
      // A turn's saves: the chat as each of them left it, the last with the whole turn.
      await send(other, id, { message: user('u1', 'hello') });
      await vi.waitFor(() => expect(seen).toContainEqual(turn), { timeout: 15_000 });
      await other.delete(id);
      await following;
      expect(seen.at(-1)).toEqual([]);
      for (const messages of seen) expect(turn.slice(0, messages.length)).toEqual(messages);
      expect(() => chats.watch(id, { signl: new AbortController().signal } as never)).toThrow(
        /no option "signl"/,
      );
    });
  });

  describe('load and save', () => {
    it('saves each turn as one checkpoint holding only its new messages', async () => {
      await send(chats, id, { message: user('u1', 'hello') });
      const before = (await store.info(id))!.checkpoints;
      await send(chats, id, { message: user('u2', 'how are you?') });
      expect((await store.info(id))!.checkpoints).toBe(before + 1);
      const newest = await store.transcript(id, { limit: 10 });
      expect(newest.items.filter((e) => e.seq === newest.items[0]!.seq)).toHaveLength(2);
      expect(texts(await chats.load(id))).toEqual([
        'user: hello',
        'assistant: You said: hello',
        'user: how are you?',
        'assistant: You said: how are you?',
      ]);
    });

    it('loads the chat in a new process as useChat and originalMessages take it', async () => {
      const { messages } = await send(chats, id, { message: user('u1', 'hello') });
      const again = new CkptChatStore(await stores.open(), { tools });
      expect(await again.load(id)).toEqual(messages);
      // The next request continues from what was loaded.
      await send(again, id, { message: user('u2', 'and again') });
      expect((await again.load(id)).map((m) => m.id).slice(0, 2)).toEqual(
        messages.map((m) => m.id),
      );
      expect(await chats.load(id)).toHaveLength(4);
    });

    it('gives an unknown chat no messages, no approval decision and no stream, creating nothing', async () => {
      expect(await chats.load('nobody')).toEqual([]);
      expect(await chats.messages('nobody')).toEqual({ messages: [], before: null });
      expect(await chats.tree('nobody')).toEqual({ headId: null, messages: [] });
      expect(await chats.approval('nobody', 'approval-1')).toBeUndefined();
      expect(await chats.activeStream('nobody')).toBeNull();
      expect(await chats.delete('nobody')).toBe(false);
      expect(await store.info('nobody')).toBeNull();
    });

    it('writes nothing when the same messages are saved again', async () => {
      const { messages } = await send(chats, id, { message: user('u1', 'hello') });
      const head = await store.head(id);
      expect(await chats.save(id, messages)).toEqual({ messageIds: [] });
      expect(await chats.save(id, await chats.load(id))).toEqual({ messageIds: [] });
      expect(await chats.save(id, messages.slice(0, 1))).toEqual({ messageIds: [] });
      expect(await store.head(id)).toBe(head);
    });

    it('saves a list whose messages are all new in a chat of its own, and names what it stored', async () => {
      const result = await chats.save(id, [user('a', 'first'), user('b', 'second')]);
      expect(result).toEqual({ messageIds: ['a', 'b'] });
      expect(texts(await chats.load(id))).toEqual(['user: first', 'user: second']);
    });

    it('appends a new question at the end of the active branch when the server loads the rest', async () => {
      await send(chats, id, { message: user('u1', 'one') });
      // The browser sends only its last message; what it knew before is loaded by the server.
      await chats.save(id, [user('u2', 'two')]);
      expect(texts(await chats.load(id)).at(-1)).toBe('user: two');
    });
  });

  describe('branches', () => {
    it('starts a new branch when a user message is edited, and deletes nothing', async () => {
      await send(chats, id, { message: user('u1', 'hello') });
      await send(chats, id, { message: user('u2', 'how are you?') });
      // useChat's sendMessage({ text, messageId }) keeps the edited message's id.
      await send(chats, id, { message: user('u1', 'hi there'), messageId: 'u1' });
      const edited = await chats.load(id);
      expect(texts(edited)).toEqual(['user: hi there', 'assistant: You said: hi there']);
      expect(edited[0]!.id).not.toBe('u1');
      expect(await chats.siblings(id, 'u1')).toEqual(['u1', edited[0]!.id]);
      // The first branch is whole, one switch away.
      await chats.switchBranch(id, 'u2');
      expect(texts(await chats.load(id))).toEqual([
        'user: hello',
        'assistant: You said: hello',
        'user: how are you?',
        'assistant: You said: how are you?',
      ]);
    });

    it('starts a new branch when an answer is regenerated', async () => {
      const first = await send(chats, id, { message: user('u1', 'hello') });
      // useChat's regenerate() drops the answer and sends the question again.
      const again = await send(chats, id, {
        message: user('u1', 'hello'),
        trigger: 'regenerate-message',
      });
      expect(again.responseMessage.id).not.toBe(first.responseMessage.id);
      const loaded = await chats.load(id);
      expect(loaded.map((m) => m.id)).toEqual(['u1', again.responseMessage.id]);
      expect(await chats.siblings(id, again.responseMessage.id)).toEqual([
        first.responseMessage.id,
        again.responseMessage.id,
      ]);
    });

    it('regenerates an answer in the middle of the chat as a branch after its question', async () => {
      await send(chats, id, { message: user('u1', 'one') });
      const two = await send(chats, id, { message: user('u2', 'two') });
      await send(chats, id, { message: user('u3', 'three') });
      const regenerated = await send(chats, id, {
        message: user('u2', 'two'),
        trigger: 'regenerate-message',
      });
      const loaded = await chats.load(id);
      expect(loaded.map((m) => m.id).slice(2)).toEqual(['u2', regenerated.responseMessage.id]);
      expect(await chats.siblings(id, regenerated.responseMessage.id)).toEqual([
        two.responseMessage.id,
        regenerated.responseMessage.id,
      ]);
    });

    it('regenerates the message regenerate({ messageId }) names, as useChat sends it', async () => {
      await send(chats, id, { message: user('u1', 'one') });
      const two = await send(chats, id, { message: user('u2', 'two') });
      await send(chats, id, { message: user('u3', 'three') });
      // regenerate({ messageId: <an answer> }) cuts before the answer and sends its question.
      const answer = await send(chats, id, {
        message: user('u2', 'two'),
        trigger: 'regenerate-message',
        messageId: two.responseMessage.id,
      });
      expect((await chats.load(id)).map((m) => m.id).slice(2)).toEqual([
        'u2',
        answer.responseMessage.id,
      ]);
      // regenerate({ messageId: <a question> }) keeps the question and sends it.
      const question = await send(chats, id, {
        message: user('u2', 'two'),
        trigger: 'regenerate-message',
        messageId: 'u2',
      });
      expect(await chats.siblings(id, question.responseMessage.id)).toEqual([
        two.responseMessage.id,
        answer.responseMessage.id,
        question.responseMessage.id,
      ]);
    });

    it('refuses a regeneration whose messageId is not on the active branch, or is not what message follows from', async () => {
      await send(chats, id, { message: user('u1', 'one') });
      const first = await send(chats, id, { message: user('u2', 'two') });
      const second = await send(chats, id, {
        message: user('u2', 'two'),
        trigger: 'regenerate-message',
      });
      const checkpoints = (await store.info(id))!.checkpoints;
      const regenerate = (message: UIMessage, messageId: string) =>
        chats.receive(id, { message, trigger: 'regenerate-message', messageId });
      // Not in the chat at all, and an answer another tab replaced by regenerating it.
      for (const missing of ['no-such-message', first.responseMessage.id]) {
        await expect(regenerate(user('u2', 'two'), missing)).rejects.toSatisfy(
          (err: unknown) =>
            isCkptError(err, 'NOT_FOUND') &&
            err.details.argument === 'messageId' &&
            err.message.includes(JSON.stringify(missing)),
        );
      }
      // The answer to u2 is regenerated from u2, not from u1.
      await expect(regenerate(user('u1', 'one'), second.responseMessage.id)).rejects.toSatisfy(
        (err: unknown) =>
          isCkptError(err, 'INVALID_ARGUMENT') &&
          err.details.argument === 'messageId' &&
          err.message.startsWith(
            `regenerate({ messageId: ${JSON.stringify(second.responseMessage.id)} }) leaves message "u2" last in chat ${JSON.stringify(id)}, but the request sends message "u1"`,
          ),
      );
      expect((await store.info(id))!.checkpoints).toBe(checkpoints);
      expect((await chats.load(id)).at(-1)!.id).toBe(second.responseMessage.id);
    });

    it('refuses an edit whose messageId is not on the active branch or is not the id it sends, and any in a chat that does not exist', async () => {
      const refusedWith =
        (code: 'NOT_FOUND' | 'INVALID_ARGUMENT', text: string) => (err: unknown) =>
          isCkptError(err, code) &&
          err.details.argument === 'messageId' &&
          err.message.includes(text);
      await expect(
        chats.receive(id, { message: user('u1', 'hi'), trigger: 'regenerate-message' }),
      ).rejects.toSatisfy(refusedWith('NOT_FOUND', `chat ${JSON.stringify(id)} does not exist`));
      await expect(
        chats.receive(id, { message: user('u1', 'hi'), messageId: 'u1' }),
      ).rejects.toSatisfy(refusedWith('NOT_FOUND', `chat ${JSON.stringify(id)} does not exist`));
      expect(await store.info(id)).toBeNull();
      await send(chats, id, { message: user('u1', 'one') });
      const checkpoints = (await store.info(id))!.checkpoints;
      await expect(
        chats.receive(id, { message: user('nope', 'edited'), messageId: 'nope' }),
      ).rejects.toSatisfy(refusedWith('NOT_FOUND', '"nope" is not on the active branch'));
      await expect(
        chats.receive(id, { message: user('u9', 'edited'), messageId: 'u1' }),
      ).rejects.toSatisfy(refusedWith('INVALID_ARGUMENT', `an edit's messageId "u1"`));
      expect((await store.info(id))!.checkpoints).toBe(checkpoints);
    });

    it('edits the first message of a chat as a branch from the empty chat', async () => {
      await send(chats, id, { message: user('u1', 'hello') });
      await send(chats, id, { message: user('u1', 'bonjour'), messageId: 'u1' });
      const [edited] = await chats.load(id);
      expect(textOf(edited!)).toBe('bonjour');
      expect((await chats.tree(id)).messages.filter((m) => m.parentId === null)).toHaveLength(2);
    });

    it('edits a message again by the id the browser still knows it by', async () => {
      await send(chats, id, { message: user('u1', 'hello') });
      await send(chats, id, { message: user('u1', 'second'), messageId: 'u1' });
      await send(chats, id, { message: user('u1', 'third'), messageId: 'u1' });
      expect(texts(await chats.load(id))).toEqual(['user: third', 'assistant: You said: third']);
      expect(await chats.siblings(id, 'u1')).toHaveLength(3);
    });

    it('keeps the new answer to an edit made again after switching back', async () => {
      const [q1, a1] = [user('q1', 'one'), assistant('a1', 'One.')];
      await chats.save(id, [q1, a1, user('q2', 'two'), assistant('a2', 'Two.')]);
      const edited = user('q2', 'two, edited');
      const first = await chats.save(id, [q1, a1, edited, assistant('b1', 'First.')]);
      await chats.switchBranch(id, 'a2');
      // The same edit again, answered anew: a new answer, not a retry of the first.
      expect(await chats.save(id, [q1, a1, edited, assistant('b2', 'Second.')])).toEqual({
        messageIds: ['b2'],
      });
      expect((await chats.load(id)).map((m) => m.id)).toEqual([
        'q1',
        'a1',
        first.messageIds[0],
        'b2',
      ]);
      expect(await chats.siblings(id, 'b2')).toEqual(['b1', 'b2']);
    });

    it('keeps the new answer when a browser edits a message again after switching back', async () => {
      await send(chats, id, { message: user('u1', 'one') });
      const two = await send(chats, id, { message: user('u2', 'two') });
      const edit = { message: user('u2', 'two, edited'), messageId: 'u2' };
      const first = await send(chats, id, edit);
      await chats.switchBranch(id, two.responseMessage.id);
      const second = await send(chats, id, edit);
      expect((await chats.load(id)).at(-1)!.id).toBe(second.responseMessage.id);
      expect(await chats.siblings(id, second.responseMessage.id)).toEqual([
        first.responseMessage.id,
        second.responseMessage.id,
      ]);
    });

    it("writes nothing new when an edit's save is retried after a switch back", async () => {
      const [q1, a1] = [user('q1', 'one'), assistant('a1', 'One.')];
      await chats.save(id, [q1, a1, user('q2', 'two'), assistant('a2', 'Two.')]);
      const turn = [q1, a1, user('q2', 'two, edited'), assistant('b1', 'First.')];
      const first = await chats.save(id, turn);
      await chats.switchBranch(id, 'a2');
      const checkpoints = (await store.info(id))!.checkpoints;
      // The same messages again (the reply to the first save was lost): answered as the first was.
      expect(await chats.save(id, turn)).toEqual(first);
      expect((await store.info(id))!.checkpoints).toBe(checkpoints);
      expect((await chats.load(id)).map((m) => m.id)).toEqual([
        'q1',
        'a1',
        first.messageIds[0],
        'b1',
      ]);
      expect(await chats.siblings(id, 'b1')).toEqual(['b1']);
    });

    it('switches to the branch holding a message, and back', async () => {
      const a = await send(chats, id, { message: user('u1', 'hello') });
      const b = await send(chats, id, {
        message: user('u1', 'hello'),
        trigger: 'regenerate-message',
      });
      await chats.switchBranch(id, a.responseMessage.id);
      expect((await chats.load(id)).at(-1)!.id).toBe(a.responseMessage.id);
      await chats.switchBranch(id, b.responseMessage.id);
      expect((await chats.load(id)).at(-1)!.id).toBe(b.responseMessage.id);
      // A switch to the branch already active changes nothing.
      const head = await store.head(id);
      await chats.switchBranch(id, b.responseMessage.id);
      expect(await store.head(id)).toBe(head);
      await expect(chats.switchBranch(id, 'no-such-message')).rejects.toSatisfy(
        refused('NOT_FOUND'),
      );
      await expect(chats.siblings(id, 'no-such-message')).rejects.toSatisfy(refused('NOT_FOUND'));
    });

    it("exports every branch as assistant-ui's message tree", async () => {
      const a = await send(chats, id, { message: user('u1', 'hello') });
      await send(chats, id, { message: user('u2', 'more') });
      const edit = await send(chats, id, { message: user('u2', 'less'), messageId: 'u2' });
      const tree = await chats.tree(id);
      expect(tree.headId).toBe(edit.responseMessage.id);
      const parentOf = new Map(tree.messages.map((m) => [m.message.id, m.parentId]));
      expect(tree.messages).toHaveLength(6);
      expect(parentOf.get('u1')).toBeNull();
      expect(parentOf.get('u2')).toBe(a.responseMessage.id);
      const editedId = (await chats.load(id)).at(-2)!.id;
      expect(editedId).not.toBe('u2');
      expect(parentOf.get(editedId)).toBe(a.responseMessage.id);
      // Each message comes after its parent, as a history adapter imports them.
      const seen = new Set<string | null>([null]);
      for (const { message, parentId } of tree.messages) {
        expect(seen.has(parentId)).toBe(true);
        seen.add(message.id);
      }
    });
  });

  describe('long chats', () => {
    it('pages the messages backward from the newest', async () => {
      for (let i = 0; i < 6; i++) await send(chats, id, { message: user(`u${i}`, `message ${i}`) });
      const all = await chats.load(id);
      const pages: UIMessage[][] = [];
      let before: string | undefined;
      for (;;) {
        const page = await chats.messages(id, { limit: 5, ...(before ? { before } : {}) });
        pages.push(page.messages);
        if (page.before === null) break;
        before = page.before;
      }
      expect(pages.map((p) => p.length)).toEqual([5, 5, 2]);
      expect(pages.reverse().flat()).toEqual(all);
      await expect(chats.messages(id, { before: 'no-such-message' })).rejects.toSatisfy(
        refused('NOT_FOUND'),
      );
      await expect(chats.messages(id, { limit: 0 })).rejects.toSatisfy(refused('INVALID_ARGUMENT'));
    });

    it('saves a turn of a long chat without reading any of its messages', async () => {
      const many = Array.from({ length: 120 }, (_, i) => user(`m${i}`, `message ${i}`));
      await chats.save(id, many);
      const reads = vi.spyOn(store, 'transcript');
      try {
        const turn = [
          ...many,
          user('q', 'question'),
          { ...user('a', 'answer'), role: 'assistant' as const },
        ];
        expect(await chats.save(id, turn)).toEqual({ messageIds: ['q', 'a'] });
        expect(await chats.save(id, turn)).toEqual({ messageIds: [] });
        expect(reads).not.toHaveBeenCalled();
      } finally {
        reads.mockRestore();
      }
      expect((await chats.messages(id, { limit: 3 })).messages.map((m) => m.id)).toEqual([
        'm119',
        'q',
        'a',
      ]);
    });

    it('reads only the newest transcript page for the newest messages of a long chat', async () => {
      const many = Array.from({ length: 120 }, (_, i) => user(`m${i}`, `message ${i}`));
      for (let i = 0; i < many.length; i += 20) await chats.save(id, many.slice(0, i + 20));
      const reads = vi.spyOn(store, 'transcript');
      try {
        const page = await chats.messages(id, { limit: 3 });
        expect(page.messages.map((m) => m.id)).toEqual(['m117', 'm118', 'm119']);
        expect(reads.mock.calls.map(([, page]) => page?.limit)).toEqual([4]);
      } finally {
        reads.mockRestore();
      }
    });
  });

  describe('the chat list', () => {
    it("lists one user's chats newest first, with title, message count and times, a page at a time", async (ctx) => {
      // A KV without `list` cannot list sessions at all (ckpt's UNSUPPORTED).
      if (!store.capabilities.listSessions) return ctx.skip();
      const user1 = chats.forUser(`alice-${made}`);
      const user2 = chats.forUser(`bob-${made}`);
      await send(user1, 'trip', { message: user('t1', 'Plan a trip to Porto') });
      await send(user2, 'other', { message: user('o1', 'not alice') });
      await send(user1, 'recipe', { message: user('r1', 'A soup recipe') });
      await user1.setTitle('trip', 'Porto trip');
      const first = await user1.list({ limit: 1 });
      expect(first.items.map((c) => c.chatId)).toEqual(['trip']);
      expect(first.items[0]).toMatchObject({ title: 'Porto trip', messageCount: 2 });
      const second = await user1.list({ limit: 1, cursor: first.cursor });
      expect(second.items).toMatchObject([
        { chatId: 'recipe', title: 'A soup recipe', messageCount: 2 },
      ]);
      expect(second.items[0]!.updatedAt.getTime()).toBeLessThanOrEqual(
        first.items[0]!.updatedAt.getTime(),
      );
      // Alice has two chats: the second page is the last (a null cursor; passing null again
      // would start over).
      expect(second.cursor).toBeNull();
      expect((await user2.list()).items.map((c) => c.chatId)).toEqual(['other']);
    });

    it('keeps the title the application set across branches', async () => {
      await send(chats, id, { message: user('u1', 'first question') });
      await chats.setTitle(id, 'My chat');
      await send(chats, id, { message: user('u1', 'edited question'), messageId: 'u1' });
      expect((await store.info(id))!.metadata.title).toBe('My chat');
      await chats.switchBranch(id, 'u1');
      expect((await store.info(id))!.metadata.title).toBe('My chat');
      expect(texts(await chats.load(id))[0]).toBe('user: first question');
    });
  });

  describe('delete', () => {
    it('deletes a chat with every branch, its approval decisions and its stream id', async () => {
      await send(chats, id, { message: user('u1', 'hello') });
      await send(chats, id, { message: user('u1', 'hi'), messageId: 'u1' });
      await chats.decideApproval(id, { approvalId: 'a1', approved: true });
      await chats.startStream(id, 'stream-1');
      expect(await chats.delete(id)).toBe(true);
      expect(await chats.load(id)).toEqual([]);
      expect(await store.info(id)).toBeNull();
      expect(await chats.approval(id, 'a1')).toBeUndefined();
      expect(await chats.activeStream(id)).toBeNull();
      expect(await chats.delete(id)).toBe(false);
    });
  });

  describe('tool approvals', () => {
    it('stores a tool part waiting for approval with its turn, still pending after a reload', async () => {
      runs.weather = 0;
      await send(chats, id, { message: user('u1', 'What is the weather in Porto?') });
      const reloaded = await new CkptChatStore(await stores.open(), { tools }).load(id);
      expect(toolStates(reloaded.at(-1))).toEqual(['approval-requested']);
      expect(runs.weather).toBe(0);
    });

    it('runs the tool once for an approval, and refuses a second decision with CONFLICT', async () => {
      runs.weather = 0;
      await send(chats, id, { message: user('u1', 'What is the weather in Porto?') });
      const asked = (await chats.load(id)).at(-1)!;
      const approved = answer(asked, true);
      await send(chats, id, { message: approved, messageId: asked.id });
      expect(runs.weather).toBe(1);
      const done = (await chats.load(id)).at(-1)!;
      expect(done.id).toBe(asked.id);
      expect(toolStates(done)).toEqual(['output-available']);
      expect(textOf(done)).toBe('The tool said: sunny in Porto');
      // The same decision again (a second tab, a retried request) runs nothing.
      await expect(send(chats, id, { message: approved, messageId: asked.id })).rejects.toSatisfy(
        refused('CONFLICT'),
      );
      expect(runs.weather).toBe(1);
    });

    it('shows a recorded decision on the part it answers, and leaves the stored message as it was', async () => {
      await send(chats, id, { message: user('u1', 'weather in Lisbon?') });
      const asked = (await chats.load(id)).at(-1)!;
      const approvalId = (asked.parts.at(-1) as { approval: { id: string } }).approval.id;
      const before = await store.transcript(id);
      const decision = await chats.decideApproval(id, {
        approvalId,
        approved: false,
        reason: 'no',
      });
      expect(decision).toMatchObject({ approvalId, approved: false, reason: 'no' });
      expect(await chats.approval(id, approvalId)).toEqual(decision);
      const shown = (await chats.load(id)).at(-1)!;
      expect(toolStates(shown)).toEqual(['approval-responded']);
      expect(shown.parts.at(-1)).toMatchObject({
        approval: { id: approvalId, approved: false, reason: 'no' },
      });
      expect(await store.transcript(id)).toEqual(before);
      await expect(chats.decideApproval(id, { approvalId, approved: true })).rejects.toSatisfy(
        refused('CONFLICT'),
      );
    });

    it('continues a turn whose approval was recorded just before the server died, and refuses another answer', async () => {
      runs.weather = 0;
      await send(chats, id, { message: user('u1', 'What is the weather in Porto?') });
      const asked = (await chats.load(id)).at(-1)!;
      const approved = answer(asked, true);
      // The decision is recorded; the server dies before the tool runs and the turn is saved.
      await chats.receive(id, { message: approved, messageId: asked.id });
      expect(toolStates((await chats.load(id)).at(-1))).toEqual(['approval-responded']);
      const approvalId = (asked.parts.at(-1) as { approval: { id: string } }).approval.id;
      const recorded = await chats.approval(id, approvalId);
      expect(await chats.decideApproval(id, { approvalId, approved: true })).toEqual(recorded);
      await expect(
        chats.receive(id, { message: answer(asked, false), messageId: asked.id }),
      ).rejects.toSatisfy(refused('CONFLICT'));
      await expect(chats.decideApproval(id, { approvalId, approved: false })).rejects.toSatisfy(
        refused('CONFLICT'),
      );
      // The same answer again is a retry: the turn goes on, and the tool runs once.
      await send(chats, id, { message: approved, messageId: asked.id });
      expect(runs.weather).toBe(1);
      const done = (await chats.load(id)).at(-1)!;
      expect(toolStates(done)).toEqual(['output-available']);
      expect(textOf(done)).toBe('The tool said: sunny in Porto');
      expect(await chats.approval(id, approvalId)).toEqual(recorded);
    });

    it("keeps a signed approval's signature through save, load and the tool's run", async () => {
      runs.weather = 0;
      const secret = 'a-secret-of-at-least-thirty-two-characters';
      await send(
        chats,
        id,
        { message: user('u1', 'weather in Faro?') },
        { approvalSecret: secret },
      );
      const asked = (await chats.load(id)).at(-1)!;
      const signature = (asked.parts.at(-1) as { approval: { signature?: string } }).approval
        .signature;
      expect(signature).toEqual(expect.any(String));
      await send(
        chats,
        id,
        { message: answer(asked, true), messageId: asked.id },
        { approvalSecret: secret },
      );
      expect(runs.weather).toBe(1);
      const part = (await chats.load(id)).at(-1)!.parts.find((p) => p.type === 'tool-weather');
      expect(part).toMatchObject({ state: 'output-available', approval: { signature } });
    });
  });

  describe('resumable streams', () => {
    it('keeps the active stream id beside the chat, and clears only its own', async () => {
      expect(await chats.activeStream(id)).toBeNull();
      expect(await chats.startStream(id, 's1')).toBeNull();
      expect(await chats.activeStream(id)).toBe('s1');
      expect(await chats.startStream(id, 's2')).toBe('s1');
      // The first stream ends after the second started: the second stays active.
      expect(await chats.endStream(id, 's1')).toBe(false);
      expect(await new CkptChatStore(await stores.open()).activeStream(id)).toBe('s2');
      expect(await chats.endStream(id, 's2')).toBe(true);
      expect(await chats.activeStream(id)).toBeNull();
    });

    it('clears the stream in onEnd after the chat is saved', async () => {
      await chats.startStream(id, 'stream-a');
      const end = chats.onEnd(id, { streamId: 'stream-a' });
      await end({ messages: [user('u1', 'hello')] });
      expect(await chats.activeStream(id)).toBeNull();
      expect(await chats.load(id)).toHaveLength(1);
    });
  });

  describe('bad input', () => {
    it('refuses bad ids, messages and options with INVALID_ARGUMENT and writes nothing', async () => {
      await expect(chats.load('')).rejects.toSatisfy(refused('INVALID_ARGUMENT'));
      expect(() => chats.forUser('a/b')).toThrow(/without "\/"/);
      await expect(chats.save(id, 'nope' as never)).rejects.toSatisfy(refused('INVALID_ARGUMENT'));
      await expect(chats.save(id, [user('x', 'a'), user('x', 'b')])).rejects.toSatisfy(
        refused('INVALID_ARGUMENT'),
      );
      await expect(chats.receive(id, {} as never)).rejects.toSatisfy(refused('INVALID_ARGUMENT'));
      await expect(
        chats.receive(id, { message: user('u', 'x'), trigger: 'resume' as never }),
      ).rejects.toSatisfy(refused('INVALID_ARGUMENT'));
      await expect(
        chats.receive(id, { message: { ...user('u', 'x'), parts: [{ type: 'text' }] } as never }),
      ).rejects.toSatisfy(refused('INVALID_ARGUMENT'));
      await expect(chats.setTitle(id, ' ')).rejects.toSatisfy(refused('INVALID_ARGUMENT'));
      await expect(chats.startStream(id, '')).rejects.toSatisfy(refused('INVALID_ARGUMENT'));
      await expect(
        chats.decideApproval(id, { approvalId: 'a', approved: 'yes' as never }),
      ).rejects.toSatisfy(refused('INVALID_ARGUMENT'));
      expect(() => new CkptChatStore(store, { version: 0 })).toThrow(/positive integer/);
      expect(() => new CkptChatStore(store, { version: 2, upgrades: { 2: (m) => m } })).toThrow(
        /upgrades\[2\]/,
      );
      expect(() => new CkptChatStore({} as never)).toThrow(/CheckpointStore or a store URL/);
      // A misspelt option would otherwise be ignored: userid would store every user's chats
      // under no user, and list() would show them all.
      for (const typo of [{ userid: 'alice' }, { verison: 2 }]) {
        expect(() => new CkptChatStore(store, typo as never)).toThrow(
          expect.objectContaining({
            code: 'INVALID_ARGUMENT',
            message: expect.stringMatching(
              /^CkptChatStore options has no option "(userid|verison)"; the options are userId, version,/,
            ),
          }),
        );
      }
      await expect(CkptChatStore.open('memory:', { userid: 'a' } as never)).rejects.toSatisfy(
        refused('INVALID_ARGUMENT'),
      );
      expect(() => new CkptChatStore(store, null as never)).toThrow(/must be an object/);
      expect(await store.info(id)).toBeNull();
    });

    it('leaves no chat behind when the first messages of a new chat are refused', async () => {
      const dated = { ...user('u1', 'hello'), metadata: { at: new Date() } };
      await expect(chats.save(id, [dated])).rejects.toSatisfy(refused('INVALID_ARGUMENT'));
      expect(await store.info(id)).toBeNull();
      expect(await chats.save(id, [user('u1', 'hello')])).toEqual({ messageIds: ['u1'] });
    });

    it('refuses a value JSON cannot carry, naming where it is, before a chat is created', async () => {
      const cycle: Record<string, unknown> = {};
      cycle.self = cycle;
      const holding = (data: unknown) =>
        ({ ...user('u2', 'x'), parts: [{ type: 'data-x', data }] }) as UIMessage;
      for (const [data, path] of [
        [10n, 'messages[1].parts[0].data'],
        [cycle, 'messages[1].parts[0].data.self'],
      ] as const) {
        await expect(chats.save(id, [user('u1', 'hi'), holding(data)])).rejects.toSatisfy(
          refusedAt(path),
        );
        expect(await store.info(id)).toBeNull();
        await expect(chats.receive(id, { message: holding(data) })).rejects.toSatisfy(
          refusedAt(path.replace('messages[1]', 'message')),
        );
      }
      // In a chat that exists, too, and nothing is written.
      await chats.save(id, [user('u1', 'hi')]);
      const head = await store.head(id);
      await expect(chats.save(id, [user('u1', 'hi'), holding(10n)])).rejects.toSatisfy(
        refusedAt('messages[1].parts[0].data'),
      );
      await expect(chats.save(id, [{ ...user('u1', 'hi'), metadata: cycle }])).rejects.toSatisfy(
        refusedAt('messages[0].metadata.self'),
      );
      expect(await store.head(id)).toBe(head);
    });

    it('refuses a role the AI SDK does not have and parts that are not an array, naming them', async () => {
      const robot = { ...user('u1', 'beep'), role: 'robot' } as never;
      const noParts = { ...user('u1', 'hi'), parts: 'hi' } as never;
      await expect(chats.save(id, [robot])).rejects.toSatisfy(refusedAt('messages[0].role'));
      await expect(chats.save(id, [noParts])).rejects.toSatisfy(refusedAt('messages[0].parts'));
      await expect(chats.receive(id, { message: robot })).rejects.toSatisfy(
        refusedAt('message.role'),
      );
      await expect(chats.receive(id, { message: noParts })).rejects.toSatisfy(
        refusedAt('message.parts'),
      );
      expect(await store.info(id)).toBeNull();
    });

    it('refuses a title for a chat that does not exist, and creates none', async () => {
      await expect(chats.setTitle(id, 'A title')).rejects.toSatisfy(refused('NOT_FOUND'));
      expect(await store.info(id)).toBeNull();
    });

    it('refuses a regeneration or an edit of a message that is not on the active branch', async () => {
      await send(chats, id, { message: user('u1', 'hello') });
      await expect(
        chats.receive(id, { message: user('gone', 'x'), trigger: 'regenerate-message' }),
      ).rejects.toSatisfy(refused('NOT_FOUND'));
      await expect(
        chats.receive(id, { message: user('gone', 'x'), messageId: 'gone' }),
      ).rejects.toSatisfy(refused('NOT_FOUND'));
    });
  });
});
