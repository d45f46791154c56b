/**
 * A real StateGraph on every backend: a tool call behind an approval interrupt, resumed in a
 * new process (or, for the in-process stores, by a new saver on the same store), then time
 * travel to an earlier checkpoint, a branch from there, and the subgraph's own namespace.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CkptSaver } from '@ckpt/langgraph';
import { SEALED_STORES, STORES, storesOn } from '@ckpt/test-stores';
import { HumanMessage } from '@langchain/core/messages';
import { Command } from '@langchain/langgraph';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import {
  agentGraph,
  approveAndFinish,
  ask,
  describeState,
  threadConfig,
} from './support/agent-graph.js';
import { putChain } from './support/chains.js';
import { runPhase } from './support/worker.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-langgraph-graph-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NAMESPACE = 'lg_graph';

const FINISHED = {
  answer: 'The answer is 5.',
  kinds: ['HumanMessage', 'AIMessage', 'ToolMessage', 'AIMessage'],
  steps: 3,
  summary: '4 messages, answer: The answer is 5.',
};

describe.each([...STORES, ...SEALED_STORES])('a StateGraph on $name', (backend) => {
  const stores = storesOn(backend, NAMESPACE, dir, ['langgraph']);
  const open = stores.open;
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);
  const phase = async (name: 'ask' | 'finish' | 'chain', threadId: string) => {
    // A store that cannot outlive a process "restarts" as a new one on the same data.
    if (backend.outlivesProcess) return runPhase([backend.name, NAMESPACE, dir, name, threadId]);
    const saver = new CkptSaver(await open());
    if (name === 'ask') return ask(saver, threadId, 'What is 2 + 3?');
    if (name === 'finish') return approveAndFinish(saver, threadId);
    return putChain(saver, threadId, 25);
  };

  it("follows a thread run by another process: each checkpoint, as the graph's history reads them", async () => {
    const thread = `followed-${Date.now()}-${Math.random()}`;
    const follower = new CkptSaver(await open());
    const config = threadConfig(thread);
    const checkpoints = follower.watch(config);
    if (!(await open()).capabilities.watch) {
      await expect(checkpoints.ready).rejects.toMatchObject({ code: 'UNSUPPORTED' });
      return;
    }
    await checkpoints.ready;
    expect(await phase('ask', thread)).toEqual({ interrupted: true });
    const history = [];
    for await (const snapshot of agentGraph(follower).getStateHistory(config)) {
      history.push(snapshot.config.configurable?.checkpoint_id);
    }
    const followed = [];
    for await (const tuple of checkpoints) {
      followed.push(tuple.config.configurable?.checkpoint_id);
      if (followed.length === history.length) break;
    }
    expect(followed).toEqual(history.reverse());
  });

  it('stops at the approval, resumes after a restart, travels back in time and branches', async () => {
    const thread = `agent-${Date.now()}-${Math.random()}`;
    expect(await phase('ask', thread)).toEqual({ interrupted: true });
    expect(await phase('finish', thread)).toEqual(FINISHED);

    const saver = new CkptSaver(await open());
    const graph = agentGraph(saver);
    const state = await graph.getState(threadConfig(thread));
    expect(describeState(state.values as never)).toEqual(FINISHED);
    expect(state.next).toEqual([]);

    // Back to the checkpoint before the model first ran, and a different question from there.
    const history = [];
    for await (const snapshot of graph.getStateHistory(threadConfig(thread)))
      history.push(snapshot);
    const beforeAgent = history.find(
      (s) =>
        s.next.includes('agent') && (s.values as { messages: unknown[] }).messages.length === 1,
    );
    expect(beforeAgent).toBeDefined();
    const branch = await graph.updateState(beforeAgent!.config, {
      messages: [new HumanMessage({ content: 'What is 4 + 4?', id: 'question' })],
    });
    const branched = await saver.getTuple(branch);
    expect(branched?.parentConfig?.configurable?.checkpoint_id).toBe(
      beforeAgent!.config.configurable?.checkpoint_id,
    );
    await graph.invoke(null, branch);
    const done = await graph.invoke(new Command({ resume: true }), threadConfig(thread));
    expect(describeState(done as never).answer).toBe('The answer is 8.');

    // The first branch is still there, whole, by its id.
    const first = await graph.getState(history[0]!.config);
    expect(describeState(first.values as never)).toEqual(FINISHED);

    // The subgraph checkpointed in a namespace of its own, which list finds and deleteThread removes.
    const namespaces = new Set<string>();
    for await (const t of saver.list({ configurable: { thread_id: thread } })) {
      namespaces.add(t.config.configurable?.checkpoint_ns as string);
    }
    expect([...namespaces].some((ns) => ns.startsWith('summarize:'))).toBe(true);
    await saver.deleteThread(thread);
    const left = [];
    for await (const t of saver.list({ configurable: { thread_id: thread } })) left.push(t);
    expect(left).toEqual([]);
    expect(await saver.getTuple(threadConfig(thread))).toBeUndefined();
  });

  it('runs parallel branches that write to one checkpoint at once', async () => {
    const { fanOutGraph } = await import('./support/fan-out-graph.js');
    const saver = new CkptSaver(await open());
    const thread = `fan-${Date.now()}-${Math.random()}`;
    const out = await fanOutGraph(saver).invoke({ found: [] }, threadConfig(thread));
    expect([...out.found].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
    const again = await fanOutGraph(saver).getState(threadConfig(thread));
    expect([...(again.values.found as string[])].sort()).toEqual(['a', 'b', 'c', 'd', 'e']);
  });

  // A KV without compareAndSet promises one writer per session at a time, and no more.
  if (!backend.singleWriter)
    it('keeps every checkpoint of two writers on one thread at once', async () => {
      const thread = `race-${Date.now()}-${Math.random()}`;
      const chains = (await Promise.all([
        phase('chain', thread),
        phase('chain', thread),
      ])) as string[][];
      const saver = new CkptSaver(await open());
      const listed = new Set<string>();
      for await (const t of saver.list(threadConfig(thread))) listed.add(t.checkpoint.id);
      const all = chains.flat();
      expect(new Set(all).size).toBe(50);
      expect([...listed].sort()).toEqual([...all].sort());
      for (const chain of chains) {
        const last = await saver.getTuple({
          configurable: { thread_id: thread, checkpoint_id: chain.at(-1) },
        });
        expect(last?.checkpoint.channel_values.count).toBe(24);
        expect(last?.parentConfig?.configurable?.checkpoint_id).toBe(chain.at(-2));
      }
      await saver.deleteThread(thread);
    });
});
