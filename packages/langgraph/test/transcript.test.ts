/**
 * The transcript a LangGraph thread's session gets, on every backend: each message a
 * checkpoint adds to a message channel, as an item with its role and text, in the order of
 * the branch LangGraph is on, so a branch from an earlier checkpoint rewinds it.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { allItems, type CheckpointStore } from '@ckpt/core';
import { CkptSaver } from '@ckpt/langgraph';
import { STORES, storesOn } from '@ckpt/test-stores';
import { HumanMessage } from '@langchain/core/messages';
import { Command, type StateSnapshot } from '@langchain/langgraph';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { agentGraph, describeState, threadConfig } from './support/agent-graph.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-langgraph-transcript-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NAMESPACE = 'lg_transcript';

/** The transcript of the thread's root namespace, oldest first. */
async function transcriptOf(store: CheckpointStore, thread: string) {
  const items = [];
  const session = JSON.stringify([thread, '']);
  for await (const entry of allItems((cursor) => store.transcript(session, { cursor }))) {
    items.push(entry.item);
  }
  return items.reverse();
}

/** The turn the agent graph makes of `a + b`, after the question. */
const turn = (a: number, b: number) => [
  {
    role: 'assistant',
    text: '',
    id: expect.any(String),
    toolCalls: [{ id: `call-${a}-${b}`, name: 'add', args: { a, b } }],
  },
  {
    role: 'tool',
    text: String(a + b),
    id: expect.any(String),
    name: 'add',
    toolCallId: `call-${a}-${b}`,
  },
  { role: 'assistant', text: `The answer is ${a + b}.`, id: expect.any(String) },
];

describe.each(STORES)('the transcript of a thread on $name', (backend) => {
  const stores = storesOn(backend, NAMESPACE, dir, ['langgraph']);
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);
  const newThread = () => `transcript-${Date.now()}-${Math.random()}`;

  /** Ask `What is 2 + 3?` and, with a new saver (a restarted process), approve and finish. */
  const askAndFinish = async (thread: string) => {
    await agentGraph(new CkptSaver(await stores.open())).invoke(
      { messages: [new HumanMessage({ content: 'What is 2 + 3?', id: 'question' })] },
      threadConfig(thread),
    );
    await agentGraph(new CkptSaver(await stores.open())).invoke(
      new Command({ resume: true }),
      threadConfig(thread),
    );
  };

  /** The checkpoint before the agent first answered: the question alone, the agent next. */
  const beforeAgent = async (saver: CkptSaver, thread: string) => {
    const history: StateSnapshot[] = [];
    for await (const s of agentGraph(saver).getStateHistory(threadConfig(thread))) history.push(s);
    return history.find(
      (s) =>
        s.next.includes('agent') && (s.values as { messages: unknown[] }).messages.length === 1,
    )!;
  };

  it('holds each message a checkpoint added, once, with its role, across a restart', async () => {
    const thread = newThread();
    await askAndFinish(thread);
    expect(await transcriptOf(await stores.open(), thread)).toEqual([
      { role: 'user', text: 'What is 2 + 3?', id: 'question' },
      ...turn(2, 3),
    ]);
  });

  it('follows a branch from an earlier checkpoint, without the messages of the branch left', async () => {
    const thread = newThread();
    await askAndFinish(thread);
    const saver = new CkptSaver(await stores.open());
    const graph = agentGraph(saver);
    const branch = await graph.updateState((await beforeAgent(saver, thread)).config, {
      messages: [new HumanMessage({ content: 'And 4 + 4?', id: 'follow-up' })],
    });
    await graph.invoke(null, branch);
    const done = await graph.invoke(new Command({ resume: true }), threadConfig(thread));
    expect(describeState(done as never).answer).toBe('The answer is 8.');
    expect(await transcriptOf(await stores.open(), thread)).toEqual([
      { role: 'user', text: 'What is 2 + 3?', id: 'question' },
      { role: 'user', text: 'And 4 + 4?', id: 'follow-up' },
      ...turn(4, 4),
    ]);
  });

  it('holds a message replaced under its id again, with its new text', async () => {
    const thread = newThread();
    await askAndFinish(thread);
    const saver = new CkptSaver(await stores.open());
    await agentGraph(saver).updateState((await beforeAgent(saver, thread)).config, {
      messages: [new HumanMessage({ content: 'What is 4 + 4?', id: 'question' })],
    });
    expect(await transcriptOf(await stores.open(), thread)).toEqual([
      { role: 'user', text: 'What is 2 + 3?', id: 'question' },
      { role: 'user', text: 'What is 4 + 4?', id: 'question' },
    ]);
  });

  it('holds nothing with the option transcript: false', async () => {
    const thread = newThread();
    const saver = new CkptSaver(await stores.open(), { transcript: false });
    await agentGraph(saver).invoke(
      { messages: [new HumanMessage({ content: 'What is 2 + 3?', id: 'question' })] },
      threadConfig(thread),
    );
    const state = await agentGraph(saver).getState(threadConfig(thread));
    expect(state.tasks.flatMap((t) => t.interrupts)).toHaveLength(1);
    expect(await transcriptOf(await stores.open(), thread)).toEqual([]);
  });
});
