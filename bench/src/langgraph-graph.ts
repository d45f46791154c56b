/**
 * The same LangGraph StateGraph agent loop on ckpt's saver and on LangGraph's own: each step
 * is one `invoke` of a graph whose node replaces a 10 KiB state and appends two messages, so
 * LangGraph writes its input and loop checkpoints and the node's writes through the saver.
 */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';
import { interleaved, type Plan } from './measure.js';
import { agentState } from './payloads.js';
import type { Row } from './report.js';

type Message = { role: string; text: string };

const LoopState = Annotation.Root({
  question: Annotation<string>(),
  state: Annotation<Record<string, unknown>>(),
  messages: Annotation<Message[]>({ reducer: (a, b) => a.concat(b), default: () => [] }),
});

const KIB = 1024;
const CKPT = '@ckpt/langgraph';

// States are made before timing: building one costs as much as saving it, for every saver.
const states = Array.from({ length: 64 }, (_, i) => agentState(10 * KIB, i));

/** The loop's graph on `saver`: START -> agent -> END. */
export function loopGraph(saver: BaseCheckpointSaver) {
  let step = 0;
  return new StateGraph(LoopState)
    .addNode('agent', (s: typeof LoopState.State) => ({
      state: states[step++ % states.length],
      messages: [
        { role: 'user', text: s.question },
        { role: 'agent', text: `answer to ${s.question}` },
      ],
    }))
    .addEdge(START, 'agent')
    .addEdge('agent', END)
    .compile({ checkpointer: saver });
}

/** A step: one invoke of `graph` on `thread`. */
function stepper(saver: BaseCheckpointSaver, thread: string) {
  const graph = loopGraph(saver);
  const config = { configurable: { thread_id: thread } };
  let turn = 0;
  return () => graph.invoke({ question: `question ${turn++}` }, config);
}

/** The loop's throughput on ckpt's saver and on each peer's, side by side. */
export async function graphLoop(
  backend: string,
  ours: BaseCheckpointSaver,
  peers: { name: string; saver: BaseCheckpointSaver }[],
  plan: Plan,
): Promise<Row[]> {
  const thread = `graph-${Date.now()}`;
  const result = await interleaved(
    [
      { name: CKPT, op: stepper(ours, thread) },
      ...peers.map((p) => ({ name: p.name, op: stepper(p.saver, thread) })),
    ],
    plan,
  );
  const row = (variant: string, vs?: string): Row => {
    const stats = result.get(variant)!;
    const ratio = vs === undefined ? null : stats.opsPerSec / result.get(vs)!.opsPerSec;
    return {
      group: 'langgraph',
      operation: 'StateGraph step',
      backend,
      variant,
      stats,
      ratio,
      ratioTo: vs === undefined ? null : `${vs} throughput`,
      target: vs === undefined ? null : '>= 1x',
    };
  };
  const mine = peers.length === 0 ? [row(CKPT)] : peers.map((p) => row(CKPT, p.name));
  return [...mine, ...peers.map((p) => row(p.name))];
}

/** Run `steps` invokes of the loop on a thread of its own, as the storage measurement's fill. */
export async function fillThread(saver: BaseCheckpointSaver, steps: number): Promise<void> {
  const step = stepper(saver, `storage-${Date.now()}`);
  for (let i = 0; i < steps; i++) await step();
}
