/** A graph whose five branches run in one superstep, so their writes land on one checkpoint. */
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import type { BaseCheckpointSaver } from '@langchain/langgraph-checkpoint';

const FanOutState = Annotation.Root({
  found: Annotation<string[]>({ reducer: (a, b) => [...a, ...b], default: () => [] }),
});

/** A branch that adds its name after a short, random wait. */
const branch = (name: string) => async () => {
  await new Promise((resolve) => setTimeout(resolve, Math.random() * 5));
  return { found: [name] };
};

/** START fans out to five nodes at once, each of which then goes to END. */
export function fanOutGraph(saver: BaseCheckpointSaver) {
  return new StateGraph(FanOutState)
    .addNode('a', branch('a'))
    .addNode('b', branch('b'))
    .addNode('c', branch('c'))
    .addNode('d', branch('d'))
    .addNode('e', branch('e'))
    .addEdge(START, 'a')
    .addEdge(START, 'b')
    .addEdge(START, 'c')
    .addEdge(START, 'd')
    .addEdge(START, 'e')
    .addEdge('a', END)
    .addEdge('b', END)
    .addEdge('c', END)
    .addEdge('d', END)
    .addEdge('e', END)
    .compile({ checkpointer: saver });
}
