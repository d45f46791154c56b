/**
 * Concurrency on every backend that allows several writers: two server processes saving turns
 * of one chat at once lose nothing, nor do two saving one edit with answers of their own; two
 * tabs answering one approval at once, one wins and the tool runs at most once; a save retried after its connection was cut, or retried while the
 * first try is still running, is applied once.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CkptChatStore } from '@ckpt/ai-sdk';
import { type CheckpointBackend, CheckpointStore, isCkptError } from '@ckpt/core';
import { STORES, storesOn } from '@ckpt/test-stores';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';
import { answer, assistant, runs, send, textOf, toolStates, tools, user } from './support/route.js';
import { runWorker } from './support/worker.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-ai-sdk-concurrency-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NAMESPACE = 'ai_sdk_race';

/**
 * A store on `store`'s backend whose next `checkpoint` is written and then fails as a cut
 * connection does: the caller cannot tell whether it was written.
 */
function cutAfterNextWrite(store: CheckpointStore): CheckpointStore {
  const backend = store.backend;
  let cut = true;
  const cutting = new Proxy(backend, {
    get(target, name, receiver) {
      if (name === 'append') {
        return async (...args: Parameters<CheckpointBackend['append']>) => {
          const outcome = await target.append(...args);
          if (cut) {
            cut = false;
            throw Object.assign(new Error('read ECONNRESET'), { code: 'ECONNRESET' });
          }
          return outcome;
        };
      }
      const value = Reflect.get(target, name, receiver);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
  return new CheckpointStore(cutting);
}

describe.each(STORES.filter((b) => !b.singleWriter))('concurrency on $name', (backend) => {
  const stores = storesOn(backend, NAMESPACE, dir, ['ai-sdk.approvals', 'ai-sdk.streams']);
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);
  let chats: CkptChatStore;
  let id: string;
  let made = 0;
  beforeEach(async () => {
    chats = new CkptChatStore(await stores.open(), { tools });
    id = `race-${backend.name.replace(/\W/g, '')}-${Date.now()}-${made++}`;
  });

  /** Run `phase` in two server processes at once (or two stores of one process, in memory). */
  async function twoServers(phase: string, args: [string, string]): Promise<unknown[]> {
    // Both tabs show the approval before either answers it.
    const asked = phase === 'answer' ? (await chats.load(id)).at(-1)! : undefined;
    const startAt = String(Date.now() + 3000);
    if (backend.outlivesProcess) {
      return Promise.all(
        args.map((arg) =>
          runWorker([
            backend.name,
            NAMESPACE,
            dir,
            startAt,
            id,
            phase,
            asked ? `${arg}:${JSON.stringify(asked)}` : arg,
          ]),
        ),
      );
    }
    const servers = [
      new CkptChatStore(await stores.open(), { tools }),
      new CkptChatStore(await stores.open(), { tools }),
    ];
    return Promise.all(
      args.map(async (arg, i) => {
        const server = servers[i]!;
        if (phase === 'turns') {
          for (let t = 0; t < 6; t++) {
            await send(server, id, { message: user(`${arg}-${t}`, `${arg} ${t}`) });
          }
          return { sent: 6 };
        }
        if (phase === 'save') return server.save(id, JSON.parse(arg));
        const before = runs.weather;
        try {
          await send(server, id, {
            message: answer(asked!, arg === 'approve'),
            messageId: asked!.id,
          });
          return { won: true, runs: runs.weather - before };
        } catch (err) {
          if (!isCkptError(err, 'CONFLICT')) throw err;
          return { won: false, runs: 0 };
        }
      }),
    );
  }

  it('loses nothing when two server processes save turns of one chat at once', async () => {
    expect(await twoServers('turns', ['a', 'b'])).toEqual([{ sent: 6 }, { sent: 6 }]);
    const loaded = await chats.load(id);
    expect(loaded).toHaveLength(24);
    // Every question is there once, followed by its own answer.
    for (let i = 0; i < loaded.length; i += 2) {
      expect(loaded[i]!.role).toBe('user');
      expect(textOf(loaded[i + 1]!)).toBe(`You said: ${textOf(loaded[i]!)}`);
    }
    const questions = loaded.filter((m) => m.role === 'user').map((m) => m.id);
    expect(questions.sort()).toEqual(
      ['a', 'b'].flatMap((tag) => Array.from({ length: 6 }, (_, t) => `${tag}-${t}`)).sort(),
    );
    expect((await chats.tree(id)).messages).toHaveLength(24);
  });

  it('keeps both answers when two server processes save one edit, each with its own answer, at once', async () => {
    const [q1, a1] = [user('q1', 'one'), assistant('a1', 'One.')];
    await chats.save(id, [q1, a1, user('q2', 'two'), assistant('a2', 'Two.')]);
    // The same edit of q2, answered by each process (the onEnd of each one's response).
    const edited = user('q2', 'two, edited');
    const turns = ['b1', 'b2'].map((b) => JSON.stringify([q1, a1, edited, assistant(b, b)]));
    await twoServers('save', turns as [string, string]);
    const loaded = await chats.load(id);
    expect(textOf(loaded.at(-2)!)).toBe('two, edited');
    expect(['b1', 'b2']).toContain(loaded.at(-1)!.id);
    expect(await chats.siblings(id, 'b1')).toEqual(expect.arrayContaining(['b1', 'b2']));
    expect(await chats.siblings(id, 'b1')).toHaveLength(2);
    expect(await chats.siblings(id, 'q2')).toEqual(['q2', loaded.at(-2)!.id]);
  });

  it('lets one of two tabs answering one approval at once win, and runs the tool at most once', async () => {
    await send(chats, id, { message: user('u1', 'weather in Porto?') });
    const outcomes = (await twoServers('answer', ['approve', 'deny'])) as {
      won: boolean;
      runs: number;
    }[];
    expect(outcomes.filter((o) => o.won)).toHaveLength(1);
    const approveWon = outcomes[0]!.won;
    expect(outcomes.reduce((sum, o) => sum + o.runs, 0)).toBe(approveWon ? 1 : 0);
    const last = (await chats.load(id)).at(-1)!;
    expect(toolStates(last)).toEqual([approveWon ? 'output-available' : 'output-denied']);
  });

  it('applies a save retried after its connection was cut once', async () => {
    await send(chats, id, { message: user('u1', 'hello') });
    const turn = [...(await chats.load(id)), user('u2', 'again'), assistant('a2', 'x')];
    const cut = new CkptChatStore(cutAfterNextWrite(await stores.open()), { tools });
    await expect(cut.save(id, turn)).rejects.toSatisfy((err) => isCkptError(err, 'BACKEND'));
    const checkpoints = (await (await chats.store).info(id))!.checkpoints;
    // The first try was written after all: the retry finds it and writes nothing.
    expect(await cut.save(id, turn)).toEqual({ messageIds: [] });
    expect((await (await chats.store).info(id))!.checkpoints).toBe(checkpoints);
    expect((await chats.load(id)).map((m) => m.id)).toEqual(turn.map((m) => m.id));
  });

  it('applies a save once when its retries race', async () => {
    await send(chats, id, { message: user('u1', 'hello') });
    const turn = [...(await chats.load(id)), user('u2', 'again')];
    const results = await Promise.all(
      Array.from({ length: 5 }, async () =>
        new CkptChatStore(await stores.open(), { tools }).save(id, turn),
      ),
    );
    expect(results.filter((r) => r.messageIds.length > 0).length).toBeGreaterThanOrEqual(1);
    expect((await chats.load(id)).map((m) => m.id)).toEqual(turn.map((m) => m.id));
    expect((await chats.tree(id)).messages).toHaveLength(3);
  });
});
