/** Asking a person at a terminal before a destructive step. */
import { createInterface } from 'node:readline/promises';
import type { CliIo } from './io.js';

/** Ask `question` on stderr and read the answer from stdin: true for y or yes. */
export async function confirm(io: CliIo, question: string): Promise<boolean> {
  const rl = createInterface({
    input: io.stdin,
    output: io.stderr as NodeJS.WritableStream,
    terminal: false,
  });
  try {
    const answer = await rl.question(`${question} [y/N] `);
    return /^y(es)?$/i.test(answer.trim());
  } finally {
    rl.close();
  }
}
