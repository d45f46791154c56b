/**
 * `@ckpt/openai-agents`: a conversation is a `CkptSession` made with tags, written as the Agents
 * SDK's runner writes it (`addItems`, `popItem`, `applyHistoryTransaction`) and read as it reads
 * it (`getItems()` and `getItems(n)`), and found by its tags as an application finds it.
 */
import { CkptSession } from '@ckpt/openai-agents';
import type { AgentInputItem } from '@openai/agents-core';
import fc from 'fast-check';
import type { Bound, Driver } from '../driver.js';

type Write =
  | { add: number }
  | { pop: true }
  | { append: number }
  /** Replace the newest `replace` items (as the runner's rewind does) with `by` items. */
  | { replace: number; by: number };

type Action =
  | { add: AgentInputItem[] }
  | { pop: true }
  | { append: AgentInputItem[]; operationId: string }
  | { expectedSuffix: AgentInputItem[]; replacement: AgentInputItem[]; operationId: string };

const item = (text: string): AgentInputItem => ({ role: 'user', content: text });
const items = (step: number, n: number) =>
  Array.from({ length: n }, (_, i) => item(`item ${step}.${i}`));

/** The tags each conversation is made with, where the store keeps tags. */
const TAGS = { agent: 'composition' };

const session = (on: Bound) =>
  new CkptSession(on.store, {
    sessionId: on.sessionId,
    ...(on.store.capabilities.tags ? { tags: TAGS } : {}),
  });

/**
 * True when the store's tag index finds the conversation by the tags it was made with; null
 * when it does not, as for a conversation never written (and on a store that cannot list).
 */
async function foundByTags(on: Bound): Promise<true | null> {
  const { tags, listSessions } = on.store.capabilities;
  if (!tags || !listSessions) return null;
  const page = await on.store.sessions({ where: TAGS, prefix: on.sessionId, limit: 1000 });
  return page.items.some((s) => s.sessionId === on.sessionId) ? true : null;
}

export const openaiAgents: Driver<Write, Action> = {
  name: '@ckpt/openai-agents',
  scopes: ['openai-agents'],
  sessionId: (name) => name,
  cliWords: (sessionId) => [sessionId],
  write: fc.oneof(
    { weight: 4, arbitrary: fc.record({ add: fc.integer({ min: 1, max: 3 }) }) },
    { weight: 1, arbitrary: fc.constant({ pop: true as const }) },
    { weight: 2, arbitrary: fc.record({ append: fc.integer({ min: 1, max: 2 }) }) },
    {
      weight: 1,
      arbitrary: fc.record({
        replace: fc.integer({ min: 1, max: 2 }),
        by: fc.integer({ min: 0, max: 2 }),
      }),
    },
  ),
  async prepare(write, on, step) {
    if ('add' in write) return { add: items(step, write.add) };
    if ('pop' in write) return write;
    const operationId = `op-${step}`;
    if ('append' in write) return { append: items(step, write.append), operationId };
    return {
      expectedSuffix: await session(on.twin).getItems(write.replace),
      replacement: items(step, write.by),
      operationId,
    };
  },
  async perform(action, on) {
    const s = session(on);
    if ('add' in action) await s.addItems(action.add);
    else if ('pop' in action) await s.popItem();
    else if ('append' in action) {
      await s.applyHistoryTransaction({
        operationId: action.operationId,
        transaction: { type: 'append_items', items: action.append },
      });
    } else {
      await s.applyHistoryTransaction({
        operationId: action.operationId,
        transaction: {
          type: 'replace_suffix',
          expectedSuffix: action.expectedSuffix,
          replacement: action.replacement,
        },
      });
    }
  },
  async read(on) {
    const s = session(on);
    const [all, newest, three, found] = await Promise.all([
      s.getItems(),
      s.getItems(1),
      s.getItems(3),
      foundByTags(on),
    ]);
    return { current: { items: all, newest, three, found }, checkpoints: {} };
  },
};
