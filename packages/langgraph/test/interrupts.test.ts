/**
 * A human-in-the-loop graph on every backend: many new threads started at once, each stopping
 * at `interrupt()`, show their pending interrupt through LangGraph's own `getState` (read by a
 * new saver, as a restarted process or another server would), and each resumes to its end.
 * With LangGraph's default durability ('async') a task's writes reach the saver before the
 * checkpoint they belong to; they must be kept all the same.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CkptSaver } from '@ckpt/langgraph';
import { STORES, storesOn } from '@ckpt/test-stores';
import { HumanMessage } from '@langchain/core/messages';
import { Command, type StateSnapshot } from '@langchain/langgraph';
import { afterAll, afterEach, describe, expect, it } from 'vitest';
import { agentGraph, describeState, threadConfig } from './support/agent-graph.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-langgraph-interrupts-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const NAMESPACE = 'lg_interrupts';
const THREADS = 20;

/** The values of the interrupts a snapshot's tasks are waiting on. */
const pendingInterrupts = (state: StateSnapshot) =>
  state.tasks.flatMap((task) => task.interrupts.map((i) => i.value));

/** What the approval node asks for the question `What is ${i} + 1?`. */
const approvalOf = (i: number) => ({ question: 'Run add?', args: { a: i, b: 1 } });

describe.each(STORES)('interrupted threads on $name', (backend) => {
  const stores = storesOn(backend, NAMESPACE, dir, ['langgraph']);
  afterAll(stores.closeAll);
  afterEach(stores.closeOpened);

  // Twenty threads are twenty sessions with one writer each, which every backend allows.
  for (const durability of [undefined, 'async', 'sync'] as const) {
    const named = durability === undefined ? "LangGraph's default durability" : durability;
    it(`shows the interrupt of each of ${THREADS} new threads started at once, and resumes each (${named})`, async () => {
      const run = `${durability ?? 'default'}-${Date.now()}-${Math.random()}`;
      const threads = Array.from({ length: THREADS }, (_, i) => `hitl-${run}-${i}`);
      const options = durability === undefined ? {} : { durability };
      const asking = agentGraph(new CkptSaver(await stores.open()));
      await Promise.all(
        threads.map((thread, i) =>
          asking.invoke(
            { messages: [new HumanMessage({ content: `What is ${i} + 1?`, id: 'question' })] },
            { ...threadConfig(thread), ...options },
          ),
        ),
      );

      const graph = agentGraph(new CkptSaver(await stores.open()));
      const states = await Promise.all(threads.map((t) => graph.getState(threadConfig(t))));
      const shown = states.filter((state) => pendingInterrupts(state).length > 0).length;
      expect(shown, `threads that show their interrupt, of ${THREADS}`).toBe(THREADS);
      expect(states.map(pendingInterrupts)).toEqual(threads.map((_, i) => [approvalOf(i)]));
      expect(states.map((state) => state.next)).toEqual(threads.map(() => ['approve']));

      await Promise.all(
        threads.map((thread) =>
          graph.invoke(new Command({ resume: true }), { ...threadConfig(thread), ...options }),
        ),
      );
      const reader = agentGraph(new CkptSaver(await stores.open()));
      const finished = await Promise.all(threads.map((t) => reader.getState(threadConfig(t))));
      expect(finished.map((state) => describeState(state.values as never).answer)).toEqual(
        threads.map((_, i) => `The answer is ${i + 1}.`),
      );
      expect(finished.map(pendingInterrupts)).toEqual(threads.map(() => []));
      expect(finished.map((state) => state.next)).toEqual(threads.map(() => []));
    });
  }
});
