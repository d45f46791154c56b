/**
 * One phase of the calculator run in a process of its own, so that the next phase runs after
 * a real restart: `node agent-worker.mjs <backend> <namespace> <dir> <phase> <session>`.
 * Prints one JSON line with the phase's result.
 */
import { CkptSession } from '@ckpt/openai-agents';
import { storeNamed } from '@ckpt/test-stores';
import { approveAndFinish, ask } from './calculator.js';

const [backendName, namespace, dir, phase, sessionId] = process.argv.slice(2) as [
  string,
  string,
  string,
  string,
  string,
];
const backend = storeNamed(backendName);
if (!backend) throw new Error(`no backend named ${backendName}`);
const handle = await backend.open(namespace, dir);
const session = new CkptSession(handle.store, { sessionId });
const result = phase === 'ask' ? await ask(session) : await approveAndFinish(session);
await handle.close();
process.stdout.write(`${JSON.stringify(result)}\n`);
