/**
 * `@ckpt/langgraph`: a thread of a real compiled LangGraph graph on `CkptSaver`, with the
 * framework's defaults (durability as LangGraph defaults it). Each turn adds the user's
 * message and a reply; the first sets a profile that never changes again (so later
 * checkpoints point to the one that holds it); a question ending in `?` stops at an
 * `interrupt()` for approval. Read as LangGraph reads it: `getState` of the thread, and
 * `getStateHistory`, whose newest two and oldest checkpoints are also read by their own
 * config, as time travel reads them.
 */
import type { CheckpointStore } from '@ckpt/core';
import { CkptSaver } from '@ckpt/langgraph';
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  Annotation,
  Command,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
  type StateSnapshot,
} from '@langchain/langgraph';
import fc from 'fast-check';
import type { Bound, Driver } from '../driver.js';

const State = Annotation.Root({
  ...MessagesAnnotation.spec,
  profile: Annotation<string>(),
});
type S = typeof State.State;

const asks = (s: S) => String(s.messages.at(-1)?.content).endsWith('?');
const lastHuman = (s: S) => [...s.messages].reverse().find((m) => m instanceof HumanMessage);

function graphOn(saver: CkptSaver) {
  return new StateGraph(State)
    .addNode('reply', (s: S) => {
      const human = lastHuman(s);
      const reply = new AIMessage({
        id: `${human?.id}:reply`,
        content: `reply: ${human?.content}`,
      });
      return s.profile === undefined
        ? { messages: [reply], profile: 'likes tea' }
        : { messages: [reply] };
    })
    .addNode('approve', (s: S) => {
      const answer = interrupt({ approve: String(lastHuman(s)?.content) });
      return {
        messages: [new AIMessage({ id: `${lastHuman(s)?.id}:done`, content: `${answer}` })],
      };
    })
    .addEdge(START, 'reply')
    .addConditionalEdges('reply', (s: S) => (asks(s) ? 'approve' : END), ['approve', END])
    .addEdge('approve', END)
    .compile({ checkpointer: saver });
}

// One saver and graph per store, as an application keeps one per process.
const graphs = new WeakMap<CheckpointStore, ReturnType<typeof graphOn>>();
function graphFor(store: CheckpointStore) {
  let graph = graphs.get(store);
  if (graph === undefined) {
    graph = graphOn(new CkptSaver(store));
    graphs.set(store, graph);
  }
  return graph;
}

/** The thread a session id names: the saver keeps thread t in the session `["t",""]`. */
const threadOf = (sessionId: string) => (JSON.parse(sessionId) as [string, string])[0];
const configOf = (on: Bound, checkpointId?: string): RunnableConfig => ({
  configurable: {
    thread_id: threadOf(on.sessionId),
    ...(checkpointId === undefined ? {} : { checkpoint_id: checkpointId, checkpoint_ns: '' }),
  },
});

type Write =
  | { turn: { ask: boolean } }
  | { resume: string }
  /** Time travel: a turn on the `travel`-th newest checkpoint of the thread's history. */
  | { travel: number; ask: boolean };

type Action = { input: string; id: string; from?: number } | { resume: string };

/** A user's message: long enough that the saver keeps the growing list as text after a common part. */
const question = (step: number, ask: boolean) =>
  `question ${step}: ${'tell me more about that. '.repeat(6)}${ask ? '?' : '.'}`;

/** Each checkpoint id the suite has seen, with its ckpt seq: copies and forks keep both. */
const seqs = new Map<string, number>();

async function learnSeqs(on: Bound): Promise<void> {
  let cursor: string | null = null;
  do {
    const page = await on.store.list(on.sessionId, { limit: 1000, cursor });
    for (const cp of page.items) {
      const id = cp.metadata.checkpoint_id;
      if (typeof id === 'string') seqs.set(id, cp.seq);
    }
    cursor = page.cursor;
  } while (cursor !== null);
}

const seqOf = (config: RunnableConfig | undefined) => {
  const id = config?.configurable?.checkpoint_id;
  return id === undefined ? null : (seqs.get(id) ?? `unknown ${id}`);
};

/** A message as the application sees it. */
const messageOf = (m: BaseMessage) => ({ type: m.getType(), id: m.id, content: m.content });

/** A snapshot with its checkpoint ids (random per store) as ckpt seqs, and its time as a stamp. */
function snapshotOf(s: StateSnapshot) {
  const values = s.values as Partial<S>;
  const { thread_id: _thread, ...metadata } = (s.metadata ?? {}) as Record<string, unknown>;
  return {
    seq: seqOf(s.config),
    parent: seqOf(s.parentConfig),
    values: { ...values, messages: (values.messages ?? []).map(messageOf) },
    next: s.next,
    tasks: s.tasks.map((t) => ({ name: t.name, interrupts: t.interrupts.map((i) => i.value) })),
    metadata,
    stamp: s.createdAt ?? null,
  };
}

/** A snapshot (or snapshots, at any depth) without its tasks' interrupts. */
function withoutInterrupts(value: unknown): unknown {
  if (Array.isArray(value)) return value.map(withoutInterrupts);
  if (typeof value !== 'object' || value === null) return value;
  return Object.fromEntries(
    Object.entries(value).map(([key, v]) => [
      key,
      key === 'interrupts' ? [] : withoutInterrupts(v),
    ]),
  );
}

export const langgraph: Driver<Write, Action> = {
  name: '@ckpt/langgraph',
  scopes: ['langgraph'],
  sessionId: (name) => JSON.stringify([name, '']),
  cliWords: (sessionId) => ['--thread', threadOf(sessionId)],
  write: fc.oneof(
    { weight: 4, arbitrary: fc.record({ turn: fc.record({ ask: fc.boolean() }) }) },
    { weight: 2, arbitrary: fc.record({ resume: fc.constantFrom('yes', 'no') }) },
    { weight: 1, arbitrary: fc.record({ travel: fc.nat(6), ask: fc.boolean() }) },
  ),
  async prepare(write, on, step) {
    const id = `h${step}`;
    if ('turn' in write) return { input: question(step, write.turn.ask), id };
    if ('resume' in write) {
      const waiting = (await graphFor(on.twin.store).getState(configOf(on.twin))).next.length > 0;
      return waiting ? write : { input: question(step, false), id };
    }
    // A checkpoint both stores hold: one a prune removed is no longer there to travel to.
    await learnSeqs(on.real);
    const held = new Set((await on.real.store.list(on.real.sessionId)).items.map((c) => c.seq));
    const history: number[] = [];
    for await (const s of graphFor(on.twin.store).getStateHistory(configOf(on.twin))) {
      const seq = seqOf(s.config);
      if (typeof seq === 'number' && held.has(seq)) history.push(seq);
    }
    const from = history.length === 0 ? undefined : history[write.travel % history.length];
    return { input: question(step, write.ask), id, ...(from === undefined ? {} : { from }) };
  },
  async perform(action, on) {
    const graph = graphFor(on.store);
    if ('resume' in action) {
      await graph.invoke(new Command({ resume: action.resume }), configOf(on));
      return;
    }
    let config = configOf(on);
    if (action.from !== undefined) {
      const at = await on.store.load(on.sessionId, action.from);
      config = configOf(on, String(at?.metadata.checkpoint_id));
    }
    await graph.invoke(
      { messages: [new HumanMessage({ id: action.id, content: action.input })] },
      config,
    );
  },
  // The README: core's fork copies checkpoints, not pending writes, so a thread forked while it
  // waits at an interrupt() does not show the interrupt.
  asForked: withoutInterrupts,
  async read(on) {
    await learnSeqs(on);
    const graph = graphFor(on.store);
    const current = snapshotOf(await graph.getState(configOf(on)));
    const listed: StateSnapshot[] = [];
    for await (const s of graph.getStateHistory(configOf(on))) listed.push(s);
    // Time travel reads a checkpoint by its own config: the newest two and the oldest (every
    // one would cost a read of the thread each). Where it reads otherwise than the history
    // lists it, the entry shows both, and so differs from what was read before.
    const travelled = new Set([listed[0], listed[1], listed.at(-1)]);
    const checkpoints: Record<number, unknown> = {};
    for (const s of listed) {
      const entry = snapshotOf(s);
      const byId = travelled.has(s) ? snapshotOf(await graph.getState(s.config)) : entry;
      checkpoints[Number(seqOf(s.config))] =
        JSON.stringify(byId) === JSON.stringify(entry) ? entry : { listed: entry, byId };
    }
    return { current, checkpoints };
  },
};
