/** Changing sessions: rollback, fork, prune, delete. */
import { CkptError } from '@ckpt/core';
import type { Command } from 'commander';
import { confirm } from '../confirm.js';
import type { Context } from '../context.js';
import { positiveInteger } from '../parse.js';
import { deleteSession, forkSession, pruneSession, rollbackSession } from '../writes.js';
import { example } from './help.js';

/** Refused: a destructive command nobody confirmed. */
export class NotConfirmed extends Error {}

export function registerRepair(program: Command, ctx: Context): void {
  example(
    program
      .command('rollback')
      .description(
        'move the head to a stored checkpoint; nothing is deleted, so rolling forward works too',
      )
      .argument('<id>', 'the session')
      .argument('<seq>', 'the checkpoint to make the head', positiveInteger('seq'))
      .option(
        '--expect-head <seq>',
        'only if the head is still this one',
        positiveInteger('expect-head'),
      )
      .action(async (id: string, seq: number, opts: { expectHead?: number }) => {
        const done = await rollbackSession(await ctx.store(), id, seq, opts.expectHead);
        ctx.output(done, () => ctx.print(`${id}: head moved from ${done.previousHead} to ${seq}`));
      }),
    'ckpt rollback chat-1 3',
  );

  example(
    program
      .command('fork')
      .description('copy a checkpoint and its ancestors into a new, independent session')
      .argument('<id>', 'the session to fork')
      .option('--at <seq>', 'the checkpoint to fork at (default: the head)', positiveInteger('at'))
      .option('--new-id <id>', 'the new session id (default: a random UUID)')
      .action(async (id: string, opts: { at?: number; newId?: string }) => {
        const done = await forkSession(await ctx.store(), id, {
          atSeq: opts.at,
          newId: opts.newId,
        });
        ctx.output(done, () => ctx.print(done.sessionId));
      }),
    'ckpt fork chat-1 --at 3 --new-id chat-1-retry',
  );

  example(
    program
      .command('prune')
      .description(
        'keep the n newest checkpoints and the head; remove the rest with their transcript items',
      )
      .argument('<id>', 'the session')
      .requiredOption(
        '--keep-last <n>',
        'how many of the newest checkpoints to keep',
        positiveInteger('keep-last'),
      )
      .action(async (id: string, opts: { keepLast: number }) => {
        const done = await pruneSession(await ctx.store(), id, opts.keepLast);
        const { removed } = done;
        ctx.output(done, () =>
          ctx.print(`${id}: removed ${removed} checkpoint${removed === 1 ? '' : 's'}`),
        );
      }),
    'ckpt prune chat-1 --keep-last 20',
  );

  example(
    program
      .command('delete')
      .description(
        'remove a session with every branch and its transcript (asks first on a terminal)',
      )
      .argument('<id>', 'the session')
      .option('-y, --yes', 'do not ask (needed when stdin is not a terminal)')
      .action(async (id: string, opts: { yes?: boolean }) => {
        const store = await ctx.store();
        const info = await store.info(id);
        if (info === null) {
          throw new CkptError(
            'NOT_FOUND',
            `session ${JSON.stringify(id)} does not exist; nothing was deleted.`,
            {
              details: { argument: 'sessionId' },
            },
          );
        }
        if (!opts.yes) {
          if (ctx.io.stdin.isTTY !== true) {
            throw new NotConfirmed(
              `delete removes session ${JSON.stringify(id)} for good; pass --yes to confirm when not at a terminal. Nothing was deleted.`,
            );
          }
          const sure = await confirm(
            ctx.io,
            `Delete session ${JSON.stringify(id)} with its ${info.checkpoints} checkpoint${info.checkpoints === 1 ? '' : 's'}? This cannot be undone.`,
          );
          if (!sure) throw new NotConfirmed('not confirmed; nothing was deleted.');
        }
        const done = await deleteSession(store, id);
        ctx.output(done, () => ctx.print(`${id}: deleted`));
      }),
    'ckpt delete chat-1 --yes',
  );
}
