/**
 * A small agent as a real LangGraph StateGraph: a "model" that asks for a tool, an approval
 * that interrupts for a human, the tool, and a summary written by a subgraph. No network: the
 * model is a function of the messages.
 */
import { AIMessage, type BaseMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import {
  Annotation,
  Command,
  END,
  interrupt,
  MessagesAnnotation,
  START,
  StateGraph,
} from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';

const AgentState = Annotation.Root({
  ...MessagesAnnotation.spec,
  /** How many agent and tool steps ran. */
  steps: Annotation<number>({ reducer: (a, b) => a + b, default: () => 0 }),
  summary: Annotation<string>(),
});
type State = typeof AgentState.State;

const SummaryState = Annotation.Root({
  ...MessagesAnnotation.spec,
  summary: Annotation<string>(),
  counted: Annotation<number>(),
});

/** The summary subgraph: counts the messages, then writes the summary. */
const summarizer = new StateGraph(SummaryState)
  .addNode('count', (s: typeof SummaryState.State) => ({ counted: s.messages.length }))
  .addNode('write', (s: typeof SummaryState.State) => ({
    summary: `${s.counted} messages, answer: ${String(s.messages.at(-1)?.content)}`,
  }))
  .addEdge(START, 'count')
  .addEdge('count', 'write')
  .addEdge('write', END)
  .compile();

function lastToolCall(state: State) {
  const last = state.messages.at(-1);
  return last instanceof AIMessage ? last.tool_calls?.[0] : undefined;
}

function agent(state: State) {
  const last = state.messages.at(-1);
  if (last instanceof ToolMessage) {
    return { messages: [new AIMessage(`The answer is ${String(last.content)}.`)], steps: 1 };
  }
  const [a = 0, b = 0] = (String(last?.content).match(/\d+/g) ?? []).map(Number);
  const call = { id: `call-${a}-${b}`, name: 'add', args: { a, b }, type: 'tool_call' as const };
  return { messages: [new AIMessage({ content: '', tool_calls: [call] })], steps: 1 };
}

function approve(state: State) {
  const call = lastToolCall(state);
  const approved = interrupt({ question: `Run ${call?.name}?`, args: call?.args });
  return new Command({ goto: approved === true ? 'tools' : END });
}

function tools(state: State) {
  const call = lastToolCall(state)!;
  const { a, b } = call.args as { a: number; b: number };
  return {
    messages: [
      new ToolMessage({ tool_call_id: call.id!, name: call.name, content: String(a + b) }),
    ],
    steps: 1,
  };
}

/** The agent graph, checkpointing to `saver`. */
export function agentGraph(saver: BaseCheckpointSaver) {
  return new StateGraph(AgentState)
    .addNode('agent', agent)
    .addNode('approve', approve, { ends: ['tools', END] })
    .addNode('tools', tools)
    .addNode('summarize', summarizer)
    .addEdge(START, 'agent')
    .addConditionalEdges('agent', (s: State) => (lastToolCall(s) ? 'approve' : 'summarize'), [
      'approve',
      'summarize',
    ])
    .addEdge('tools', 'agent')
    .addEdge('summarize', END)
    .compile({ checkpointer: saver });
}

/** A config for `threadId`. */
export const threadConfig = (threadId: string) => ({ configurable: { thread_id: threadId } });

/** Ask the question; the run stops at the approval. Returns whether it was interrupted. */
export async function ask(saver: BaseCheckpointSaver, threadId: string, question: string) {
  const out = await agentGraph(saver).invoke(
    { messages: [new HumanMessage({ content: question, id: 'question' })] },
    threadConfig(threadId),
  );
  const interrupts = (out as { __interrupt__?: unknown[] }).__interrupt__;
  return { interrupted: Array.isArray(interrupts) && interrupts.length > 0 };
}

/** Approve the pending tool call and run to the end. */
export async function approveAndFinish(saver: BaseCheckpointSaver, threadId: string) {
  const out = await agentGraph(saver).invoke(new Command({ resume: true }), threadConfig(threadId));
  return describeState(out as State);
}

/** What a test compares of a final state. */
export function describeState(state: State) {
  return {
    answer: String(state.messages.at(-1)?.content),
    kinds: state.messages.map((m: BaseMessage) => m.constructor.name),
    steps: state.steps,
    summary: state.summary,
  };
}
