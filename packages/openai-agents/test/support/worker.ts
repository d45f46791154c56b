/** The calculator's phases in processes of their own (see @ckpt/test-stores/worker). */
import { fileURLToPath } from 'node:url';
import { phaseRunner } from '@ckpt/test-stores/worker';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Run one phase of agent-worker.ts in a new process and return the JSON it printed. */
export const runPhase = phaseRunner({
  entry: here('./agent-worker.ts'),
  outfile: here('../.build/agent-worker.mjs'),
  external: ['@openai/*', 'zod', 'zod/*'],
});
