/** `ckpt` run in this process (`main`), its output kept. */
import { Writable } from 'node:stream';
import { type CliIo, main } from '@ckpt/cli';

/** Run `ckpt args`, with `io` in place of what it would open or listen to by default. */
export async function ckptInProcess(
  args: string[],
  io: Pick<CliIo, 'open'> = {},
): Promise<{ code: number; stdout: string; stderr: string }> {
  let stdout = '';
  let stderr = '';
  const sink = (write: (text: string) => void) =>
    new Writable({
      write(chunk, _encoding, done) {
        write(String(chunk));
        done();
      },
    });
  const code = await main(args, {
    stdout: sink((t) => {
      stdout += t;
    }),
    stderr: sink((t) => {
      stderr += t;
    }),
    stdin: process.stdin,
    env: {},
    ...io,
  });
  return { code, stdout, stderr };
}
