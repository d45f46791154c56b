/**
 * A multi-turn chat as a real LangGraph StateGraph: each turn adds the user's message and a
 * reply long enough that the saver holds the growing list as tails on earlier checkpoints, and
 * the first turn sets a profile that never changes again, so later checkpoints point to the
 * checkpoint that holds it.
 */
import { AIMessage, type BaseMessage, HumanMessage } from '@langchain/core/messages';
import { Annotation, END, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';

const ChatState = Annotation.Root({
  ...MessagesAnnotation.spec,
  profile: Annotation<string>(),
});
type State = typeof ChatState.State;

/** The chat graph, checkpointing to `saver`. */
export function chatGraph(saver: BaseCheckpointSaver) {
  return new StateGraph(ChatState)
    .addNode('greet', (s: State) => (s.profile === undefined ? { profile: 'likes tea' } : {}))
    .addNode('reply', (s: State) => ({
      messages: [new AIMessage(`reply to: ${String(s.messages.at(-1)?.content)}`)],
    }))
    .addEdge(START, 'greet')
    .addEdge('greet', 'reply')
    .addEdge('reply', END)
    .compile({ checkpointer: saver });
}

/** The user's message of turn `i`: a few hundred characters, as a real one might be. */
export const question = (i: number) => `question ${i}: ${'tell me more about that. '.repeat(12)}`;

/** Run turn `i` of `threadId` with LangGraph's default durability; returns the state after. */
export async function chatTurn(saver: BaseCheckpointSaver, threadId: string, i: number) {
  const out = await chatGraph(saver).invoke(
    { messages: [new HumanMessage(question(i))] },
    { configurable: { thread_id: threadId } },
  );
  return out as State;
}

/** The conversation after `turns` turns: each question and its reply, in order. */
export function conversation(turns: number): string[] {
  return Array.from({ length: turns }, (_, i) => [question(i), `reply to: ${question(i)}`]).flat();
}

/** The texts of `messages`. */
export const textsOf = (messages: BaseMessage[]) => messages.map((m) => String(m.content));
