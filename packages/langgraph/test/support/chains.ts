/** Checkpoint chains written straight through the saver, as LangGraph's loop writes them. */
import type { RunnableConfig } from '@langchain/core/runnables';
import { type BaseCheckpointSaver, emptyCheckpoint, uuid6 } from '@langchain/langgraph-checkpoint';

/** Put `count` checkpoints on `threadId`, each the child of the last; returns their ids. */
export async function putChain(saver: BaseCheckpointSaver, threadId: string, count: number) {
  let config: RunnableConfig = { configurable: { thread_id: threadId, checkpoint_ns: '' } };
  const ids: string[] = [];
  for (let step = 0; step < count; step++) {
    const version = step + 1;
    const checkpoint = {
      ...emptyCheckpoint(),
      id: uuid6(-3),
      channel_values: { count: step, [`own-${process.pid}`]: step },
      channel_versions: { count: version, [`own-${process.pid}`]: version },
    };
    config = await saver.put(
      config,
      checkpoint,
      { source: 'loop', step, parents: {} },
      { count: version, [`own-${process.pid}`]: version },
    );
    ids.push(checkpoint.id);
  }
  return ids;
}
