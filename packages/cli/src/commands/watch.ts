/** `ckpt watch`: every change to the store, a line each, as it commits, until Ctrl-C. */
import type { ChangeEvent } from '@ckpt/core';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { shortTime } from '../io.js';
import { example } from './help.js';

/** A change as a line: when it arrived, its kind, the session and the head after it. */
function changeLine(ctx: Context, event: ChangeEvent): string {
  const at = ctx.colors.dim(shortTime(new Date()));
  const seq = event.seq === undefined ? '' : `  ${event.seq}`;
  return `${at}  ${event.kind.padEnd(10)}  ${event.sessionId}${seq}`;
}

export function registerWatch(program: Command, ctx: Context): void {
  example(
    program
      .command('watch')
      .description(
        'print each change to the store as it commits, from every process (checkpoint, rollback, fork, delete, prune, state), until Ctrl-C',
      )
      .option('--prefix <p>', 'only the sessions (and state scopes) whose id starts with p')
      .option('--session <id>', 'only this session')
      .option('--since <cursor>', 'first the changes after this cursor (printed with --json)')
      .action(async (opts: { prefix?: string; session?: string; since?: string }) => {
        const store = await ctx.store();
        const controller = new AbortController();
        const stop = () => {
          stopListening?.();
          process.off('SIGTERM', stop);
          controller.abort();
        };
        const stopListening = ctx.io.onInterrupt?.(stop);
        process.on('SIGTERM', stop);
        try {
          const changes = store.watch({
            prefix: opts.prefix,
            sessionId: opts.session,
            since: opts.since,
            signal: controller.signal,
          });
          await changes.ready;
          if (!ctx.json) ctx.note('watching; Ctrl-C to stop');
          for await (const event of changes) {
            // One JSON object a line, for a pipe (`| jq -c`), rather than one document.
            ctx.print(ctx.json ? JSON.stringify(event) : changeLine(ctx, event));
          }
        } finally {
          stop();
        }
      }),
    'ckpt watch --store postgres://localhost/app --prefix user-42/',
    'ckpt watch --store sqlite:./agent.db --json | jq -c .',
  );
}
