/** The concurrency tests' server processes (see @ckpt/test-stores/worker). */
import { fileURLToPath } from 'node:url';
import { phaseRunner } from '@ckpt/test-stores/worker';

const here = (path: string) => fileURLToPath(new URL(path, import.meta.url));

/** Run chat-worker.ts in a new process and return the JSON it printed. */
export const runWorker = phaseRunner({
  entry: here('./chat-worker.ts'),
  outfile: here('../.build/chat-worker.mjs'),
  external: ['ai', 'ai/*', '@ai-sdk/*', 'zod', 'zod/*'],
});
