/**
 * One phase of the agent graph in a process of its own, so that the next phase runs after a
 * real restart: `node graph-worker.mjs <backend> <namespace> <dir> <phase> <thread>`. Prints
 * one JSON line with the phase's result.
 */
import { CkptSaver } from '@ckpt/langgraph';
import { storeNamed } from '@ckpt/test-stores';
import { approveAndFinish, ask } from './agent-graph.js';
import { putChain } from './chains.js';

const [backendName, namespace, dir, phase, threadId] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const backend = storeNamed(backendName);
if (!backend) throw new Error(`no backend named ${backendName}`);
const handle = await backend.open(namespace, dir);
const saver = new CkptSaver(handle.store);
let result: unknown;
if (phase === 'ask') result = await ask(saver, threadId, 'What is 2 + 3?');
else if (phase === 'finish') result = await approveAndFinish(saver, threadId);
else if (phase === 'chain') result = await putChain(saver, threadId, 25);
else throw new Error(`unknown phase ${phase}`);
await handle.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
