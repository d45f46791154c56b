/** Changing sessions: rollback, fork, prune, delete. */
import type { Command } from 'commander';
import { confirm } from '../confirm.js';
import type { Context } from '../context.js';
import { count } from '../io.js';
import { duration, parseArgument, positiveInteger } from '../parse.js';
import { existingSession } from '../reads.js';
import { sessionAndRest, sessionArguments, type ThreadOptions } from '../session-ref.js';
import { UsageError } from '../usage-error.js';
import { deleteSession, forkSession, pruneSession, rollbackSession } from '../writes.js';
import { example } from './help.js';

/** Refused: a destructive command nobody confirmed. */
export class NotConfirmed extends Error {}

export function registerRepair(program: Command, ctx: Context): void {
  example(
    sessionArguments(
      program
        .command('rollback')
        .description(
          'move the head to a stored checkpoint; nothing is deleted, so rolling forward works too',
        ),
      ['seq', 'the checkpoint to make the head'],
    )
      .option(
        '--expect-head <seq>',
        'only if the head is still this one',
        positiveInteger('expect-head'),
      )
      .action(
        async (
          id: string | undefined,
          given: string | undefined,
          opts: ThreadOptions & { expectHead?: number },
        ) => {
          const { session: ref, rest } = sessionAndRest([id, given], opts, ['seq']);
          const seq = parseArgument(positiveInteger('seq'), rest[0]!);
          const done = await rollbackSession(
            await ctx.store(),
            ref.sessionId,
            seq,
            opts.expectHead,
          );
          ctx.output(done, () =>
            ctx.print(`${ref.sessionId}: head moved from ${done.previousHead} to ${seq}`),
          );
        },
      ),
    'ckpt rollback chat-1 3',
    'ckpt rollback --thread thread-7 3',
  );

  example(
    sessionArguments(
      program
        .command('fork')
        .description('copy a checkpoint and its ancestors into a new, independent session'),
    )
      .option('--at <seq>', 'the checkpoint to fork at (default: the head)', positiveInteger('at'))
      .option('--new-id <id>', 'the new session id (default: a random UUID)')
      .action(
        async (id: string | undefined, opts: ThreadOptions & { at?: number; newId?: string }) => {
          const { session: ref } = sessionAndRest([id], opts);
          const done = await forkSession(await ctx.store(), ref.sessionId, {
            atSeq: opts.at,
            newId: opts.newId,
          });
          ctx.output(done, () => ctx.print(done.sessionId));
        },
      ),
    'ckpt fork chat-1 --at 3 --new-id chat-1-retry',
  );

  example(
    sessionArguments(
      program
        .command('prune')
        .description(
          'remove the checkpoints beyond the n newest and/or older than a duration (only those both let go, when both are given); the head, pinned checkpoints and what kept ones need stay',
        ),
    )
      .option(
        '--keep-last <n>',
        'how many of the newest checkpoints to keep',
        positiveInteger('keep-last'),
      )
      .option(
        '--older-than <duration>',
        'keep the checkpoints younger than this (30d, 12h, 45m …)',
        duration('older-than'),
      )
      .action(
        async (
          id: string | undefined,
          opts: ThreadOptions & { keepLast?: number; olderThan?: number },
        ) => {
          const { session: ref } = sessionAndRest([id], opts);
          if (opts.keepLast === undefined && opts.olderThan === undefined) {
            throw new UsageError(
              'prune needs --keep-last, --older-than or both; nothing was removed.',
            );
          }
          const store = await ctx.store();
          // A misspelt id, or a thread's id given as a session's, is told apart from "nothing to remove".
          await existingSession(store, ref);
          const done = await pruneSession(store, ref.sessionId, {
            keepLast: opts.keepLast,
            olderThan: opts.olderThan,
          });
          ctx.output(done, () =>
            ctx.print(`${ref.sessionId}: removed ${count(done.removed, 'checkpoint')}`),
          );
        },
      ),
    'ckpt prune chat-1 --keep-last 20',
    'ckpt prune chat-1 --keep-last 5 --older-than 30d',
  );

  example(
    sessionArguments(
      program
        .command('delete')
        .description(
          'remove a session with every branch and its transcript (asks first on a terminal)',
        ),
    )
      .option('-y, --yes', 'do not ask (needed when stdin is not a terminal)')
      .action(async (id: string | undefined, opts: ThreadOptions & { yes?: boolean }) => {
        const { session: ref } = sessionAndRest([id], opts);
        const store = await ctx.store();
        const info = await existingSession(store, ref);
        if (!opts.yes) {
          if (ctx.io.stdin.isTTY !== true) {
            throw new NotConfirmed(
              `delete removes ${ref.label} for good; pass --yes to confirm when not at a terminal. Nothing was deleted.`,
            );
          }
          const sure = await confirm(
            ctx.io,
            `Delete ${ref.label} with its ${count(info.checkpoints, 'checkpoint')}? This cannot be undone.`,
          );
          if (!sure) throw new NotConfirmed('not confirmed; nothing was deleted.');
        }
        const done = await deleteSession(store, ref.sessionId);
        ctx.output(done, () => ctx.print(`${ref.sessionId}: deleted`));
      }),
    'ckpt delete chat-1 --yes',
  );
}
