/**
 * A conversation's tags (the `tags` option) on every backend, driven as an application drives
 * the session: agent runs with the SDK's offline scripted model, then found with
 * `store.sessions({ where })` and read back through a `CkptSession` of each.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, isCkptError } from '@ckpt/core';
import { memory } from '@ckpt/memory';
import { CkptSession } from '@ckpt/openai-agents';
import { STORES, storesOn, withoutTags } from '@ckpt/test-stores';
import { Agent, type AgentInputItem, run, setTracingDisabled } from '@openai/agents-core';
import { assistantMessage, ScriptedModel } from '@openai/agents-core/testing';
import { afterAll, afterEach, beforeEach, describe, expect, it } from 'vitest';

setTracingDisabled(true);

const dir = mkdtempSync(join(tmpdir(), 'ckpt-agents-tags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const refused = (code: string) => (err: unknown) => isCkptError(err, code as never);
const user = (text: string): AgentInputItem => ({ role: 'user', content: text });
let made = 0;

/** One turn of an agent that answers `answer`, on `session`. */
async function turn(session: CkptSession, input: string, answer: string) {
  const model = new ScriptedModel([[assistantMessage(answer)]]);
  const agent = new Agent({ name: 'support', instructions: 'Help.', model });
  return (await run(agent, input, { session })).finalOutput;
}

/** Every session id `sessions({ where })` gives, a page of `limit` at a time. */
async function findAll(store: CheckpointStore, where: Record<string, string>, limit: number) {
  const ids: string[] = [];
  let cursor: string | null = null;
  do {
    const page = await store.sessions({ where, limit, cursor });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    ids.push(...page.items.map((s) => s.sessionId));
    cursor = page.cursor;
  } while (cursor !== null);
  return ids;
}

describe.each(STORES)('tags of CkptSession on $name', (backend) => {
  const stores = storesOn(backend, 'oa_tags', dir, ['openai-agents']);
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);
  let store: CheckpointStore;
  /** A user of this test alone. */
  let ann: string;
  beforeEach(async (ctx) => {
    store = await stores.open();
    ann = `ann-${made++}`;
    // A KV without `list` finds nothing; a backend without tags is tested below, on memory().
    if (!store.capabilities.listSessions || !store.capabilities.tags) ctx.skip();
  });

  it('gives a new conversation its tags with its first checkpoint; sessions({ where }) finds it, a page at a time', async () => {
    const agents = ['support', 'billing'];
    const ids = Array.from({ length: 9 }, (_, i) => `${ann}-conversation-${i}`);
    await Promise.all(
      ids.map((sessionId, i) => {
        const tags = { user: ann, agent: agents[i % 2]! };
        return turn(new CkptSession(store, { sessionId, tags }), `question ${i}`, `answer ${i}`);
      }),
    );
    await turn(new CkptSession(store, { tags: { user: `bob-${made}` } }), 'not ann', 'no');
    for (const [i, sessionId] of ids.entries()) {
      expect((await store.info(sessionId))!.tags).toEqual({ agent: agents[i % 2], user: ann });
    }
    const found = await findAll(store, { user: ann }, 2);
    expect([...found].sort()).toEqual([...ids].sort());
    expect(new Set(found).size).toBe(found.length);
    const billing = await findAll(store, { user: ann, agent: 'billing' }, 3);
    expect(billing.sort()).toEqual(ids.filter((_, i) => i % 2 === 1).sort());
    // What was found reads back through the SDK's session.
    for (const sessionId of billing) {
      const items = await new CkptSession(store, { sessionId }).getItems();
      const n = ids.indexOf(sessionId);
      expect(items[0]).toMatchObject({ role: 'user', content: `question ${n}` });
      expect(JSON.stringify(items.at(-1))).toContain(`answer ${n}`);
    }
  });

  it('leaves the tags of a conversation that exists, whatever a later session gives', async () => {
    const sessionId = `${ann}-kept`;
    await new CkptSession(store, { sessionId, tags: { user: ann } }).addItems([user('a')]);
    const later = new CkptSession(store, { sessionId, tags: { user: 'someone-else' } });
    await later.addItems([user('b')]);
    await later.applyHistoryTransaction({
      operationId: 'op-1',
      transaction: { type: 'append_items', items: [user('c')] },
    });
    await later.popItem();
    expect((await store.info(sessionId))!.tags).toEqual({ user: ann });
    // Changed on their own, they stay through the next change too.
    await store.setTags(sessionId, { user: ann, status: 'closed' });
    await later.addItems([user('d')]);
    expect((await store.info(sessionId))!.tags).toEqual({ status: 'closed', user: ann });
    // A conversation made before tags keeps none: tag it with store.setTags.
    const earlier = `${ann}-earlier`;
    await new CkptSession(store, { sessionId: earlier }).addItems([user('a')]);
    await new CkptSession(store, { sessionId: earlier, tags: { user: ann } }).addItems([user('b')]);
    expect((await store.info(earlier))!.tags).toEqual({});
  });

  it("keeps the tags of the session that made the conversation when two make it at once, and each one's items", async () => {
    const sessionId = `${ann}-race`;
    const tagsOf = (who: string) => ({ user: ann, by: who });
    await Promise.all(
      ['one', 'two'].map((who) =>
        new CkptSession(store, { sessionId, tags: tagsOf(who) }).addItems([user(who)]),
      ),
    );
    const { tags } = (await store.info(sessionId))!;
    expect([tagsOf('one'), tagsOf('two')]).toContainEqual(tags);
    const items = await new CkptSession(store, { sessionId }).getItems();
    expect(items.map((i) => (i as { content: string }).content).sort()).toEqual(['one', 'two']);
  });

  it('tags the conversation again when it is made anew after clearSession', async () => {
    const session = new CkptSession(store, { sessionId: `${ann}-again`, tags: { user: ann } });
    await session.addItems([user('a')]);
    await session.clearSession();
    expect(await findAll(store, { user: ann }, 10)).toEqual([]);
    await session.addItems([user('b')]);
    expect(await findAll(store, { user: ann }, 10)).toEqual([`${ann}-again`]);
  });

  it('refuses bad tags with INVALID_ARGUMENT, writing nothing', async () => {
    const sessionId = `${ann}-bad`;
    for (const tags of [{ 'no spaces': 'x' }, { user: 'a\0b' }, 'user=ann']) {
      expect(() => new CkptSession(store, { sessionId, tags: tags as never })).toThrow(
        expect.objectContaining({ code: 'INVALID_ARGUMENT' }),
      );
    }
    expect(await store.info(sessionId)).toBeNull();
  });
});

describe('a store without tags', () => {
  it('refuses the tags option there, writing nothing; without it a session works as before', async () => {
    const store = new CheckpointStore(withoutTags(memory()));
    expect(store.capabilities.tags).toBe(false);
    const tagged = new CkptSession(store, { sessionId: 'x', tags: { user: 'ann' } });
    await expect(tagged.addItems([user('a')])).rejects.toSatisfy(refused('UNSUPPORTED'));
    expect(await store.info('x')).toBeNull();
    await new CkptSession(store, { sessionId: 'x' }).addItems([user('a')]);
    await expect(tagged.getItems()).resolves.toHaveLength(1);
    await expect(tagged.addItems([user('b')])).rejects.toSatisfy(refused('UNSUPPORTED'));
    expect(await new CkptSession(store, { sessionId: 'x' }).getItems()).toHaveLength(1);
  });
});

describe('the options of CkptSession', () => {
  const invalid = (argument: string | RegExp, message: RegExp) =>
    expect.objectContaining({
      code: 'INVALID_ARGUMENT',
      details: {
        argument: typeof argument === 'string' ? argument : expect.stringMatching(argument),
      },
      message: expect.stringMatching(message),
    });

  it('refuses an unknown option, naming it and the valid ones, before anything is opened', () => {
    const store = new CheckpointStore(memory());
    for (const [options, name] of [
      [{ sessionid: 'x' }, 'sessionid'],
      [{ sessionId: 'a', tag: { user: 'ann' } }, 'tag'],
    ] as const) {
      expect(() => new CkptSession(store, options as never)).toThrow(
        invalid(
          'options',
          new RegExp(`no option "${name}"; the options are sessionId, scope, tags`),
        ),
      );
    }
    expect(() => new CkptSession('not a url', { sessionid: 'x' } as never)).toThrow(
      invalid('options', /no option "sessionid"/),
    );
    // An option given as undefined is as if left out.
    expect(() => new CkptSession(store, { sessionId: 'x', scope: undefined })).not.toThrow();
  });

  it('checks the form of tags in the constructor, also on a conversation that exists', async () => {
    const store = new CheckpointStore(memory());
    await new CkptSession(store, { sessionId: 'order-1', tags: { user: 'ann' } }).addItems([
      user('a'),
    ]);
    for (const tags of [
      { 'bad key': 'x' },
      { ['k'.repeat(65)]: 'x' },
      { user: 'x'.repeat(257) },
      { user: 1 },
      { user: '\ud800' },
      Object.fromEntries(Array.from({ length: 17 }, (_, i) => [`k${i}`, 'v'])),
      ['user'],
      null,
    ]) {
      expect(() => new CkptSession(store, { sessionId: 'order-1', tags: tags as never })).toThrow(
        // A value's refusal names its key: options.tags.user.
        invalid(/^options\.tags(\.|$)/, /options\.tags/),
      );
    }
    const ok = { user: 'ann', 'a.b:c-d_e': 'é'.repeat(128), ['k'.repeat(64)]: '' };
    await new CkptSession(store, { sessionId: 'order-1', tags: ok }).addItems([user('b')]);
    expect((await store.info('order-1'))?.tags).toEqual({ user: 'ann' });
  });
});
