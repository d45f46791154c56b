/** A LangGraph checkpoint saver driven through the agent-loop step. */
import type { RunnableConfig } from '@langchain/core/runnables';
import { type BaseCheckpointSaver, emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';
import type { PeerStep } from './scenarios.js';

/** Save each step as a checkpoint of one thread, then read the latest back. */
export function langgraphStep(saver: BaseCheckpointSaver, thread = `loop-${Date.now()}`): PeerStep {
  let config: RunnableConfig = { configurable: { thread_id: thread, checkpoint_ns: '' } };
  return async (step, state, said) => {
    const checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(step),
      channel_values: { state, messages: said },
    };
    config = await saver.put(config, checkpoint, { source: 'loop', step, parents: {} }, {});
    return saver.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
  };
}
