/** Keeping storage bounded: sweep the whole store; pin and unpin what must stay. */
import type { SweepProgress, SweepResult } from '@ckpt/core';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { interruptible } from '../interrupt.js';
import { count } from '../io.js';
import { duration, parseArgument, positiveInteger } from '../parse.js';
import { Progress, sessionTotal } from '../progress.js';
import { sessionAndRest, sessionArguments, type ThreadOptions } from '../session-ref.js';
import { UsageError } from '../usage-error.js';
import { type Pinned, pinCheckpoint, unpinCheckpoint } from '../writes.js';
import { example } from './help.js';

interface SweepOptions {
  idle?: number;
  keepLast?: number;
  olderThan?: number;
  dryRun?: boolean;
}

/** What `sweep --json` prints: what went (or would go), and how many sessions were looked at. */
interface Swept extends SweepResult {
  walked: number;
  dryRun: boolean;
}

/**
 * `deleted 3 idle sessions and removed 40 checkpoints in all, looking at 120 sessions in 0.4 s`;
 * without `--idle`, `removed 40 checkpoints, looking at …`.
 */
function summary(swept: Swept, idle: boolean, seconds: number): string {
  const [deleted, removed] = swept.dryRun ? ['would delete', 'remove'] : ['deleted', 'removed'];
  const checkpoints = `${removed} ${count(swept.checkpoints, 'checkpoint')}`;
  const what = idle
    ? `${deleted} ${count(swept.sessions, 'idle session')} and ${checkpoints} in all`
    : swept.dryRun
      ? `would ${checkpoints}`
      : checkpoints;
  return `${what}, looking at ${count(swept.walked, 'session')} in ${seconds.toFixed(1)} s`;
}

/** `pinned 12`, or what a pin of a pinned checkpoint did to its note. */
function pinLine(done: Pinned, wasPinned: boolean): string {
  if (!done.changed) {
    return done.pinNote === null
      ? `${done.seq} was already pinned, without a note`
      : `${done.seq} was already pinned; its note ${JSON.stringify(done.pinNote)} is kept`;
  }
  if (!wasPinned) return `pinned ${done.seq}`;
  return done.pinNote === null
    ? `${done.seq} was already pinned; cleared its note`
    : `${done.seq} was already pinned; its note is now ${JSON.stringify(done.pinNote)}`;
}

export function registerRetention(program: Command, ctx: Context): void {
  example(
    program
      .command('sweep')
      .description(
        'walk the whole store: delete the sessions idle for longer than --idle that hold no pin, and prune every other one by --keep-last and --older-than (pinned checkpoints and the head stay)',
      )
      .option(
        '--idle <duration>',
        'delete sessions with no checkpoint, rollback or import for this long (30d, 12h …)',
        duration('idle'),
      )
      .option(
        '--keep-last <n>',
        'prune each other session to its n newest checkpoints',
        positiveInteger('keep-last'),
      )
      .option(
        '--older-than <duration>',
        'prune the checkpoints older than this (with --keep-last: only those both let go)',
        duration('older-than'),
      )
      .option('--dry-run', 'count what would be removed, removing nothing')
      .action(async (opts: SweepOptions) => {
        if (
          opts.idle === undefined &&
          opts.keepLast === undefined &&
          opts.olderThan === undefined
        ) {
          throw new UsageError(
            'sweep needs --idle, --keep-last, --older-than or a mix; nothing was removed.',
          );
        }
        const store = await ctx.store();
        const started = Date.now();
        const total = await sessionTotal(ctx, store);
        const progress = Progress.sessions(ctx, total, opts.dryRun ? 'looked at' : 'swept');
        let seen: SweepProgress = { walked: 0, sessions: 0, checkpoints: 0 };
        const dryRun = opts.dryRun === true;
        let result: SweepResult;
        try {
          result = await interruptible(
            ctx,
            (signal) =>
              store.sweep({
                ...(opts.idle === undefined ? {} : { idleFor: opts.idle }),
                ...(opts.keepLast === undefined ? {} : { keepLast: opts.keepLast }),
                ...(opts.olderThan === undefined ? {} : { olderThan: opts.olderThan }),
                dryRun,
                signal,
                onProgress: (p) => {
                  seen = p;
                  progress?.update(p.walked, {
                    sessions: p.walked,
                    checkpoints: p.checkpoints,
                    state: 0,
                    skipped: 0,
                  });
                },
              }),
            () =>
              `stopped: ${summary({ ...seen, dryRun }, opts.idle !== undefined, (Date.now() - started) / 1000)}; what was removed is gone and the rest is as it was. Run the same command again to finish.`,
          );
        } finally {
          progress?.stop();
        }
        const swept: Swept = { ...result, walked: seen.walked, dryRun };
        ctx.output(swept, () =>
          ctx.note(summary(swept, opts.idle !== undefined, (Date.now() - started) / 1000)),
        );
      }),
    'ckpt sweep --idle 30d --keep-last 20',
    'ckpt sweep --idle 30d --keep-last 20 --older-than 90d --dry-run',
  );

  example(
    sessionArguments(
      program
        .command('pin')
        .description(
          'pin a checkpoint: no prune, sweep or retention removes it, and no sweep deletes its session (delete still does)',
        ),
      ['seq', 'the checkpoint to pin'],
    )
      .option(
        '--note <text>',
        "why it is kept (1 to 255 characters); without it a pinned checkpoint keeps its note, and --note '' clears it",
      )
      .action(
        async (
          id: string | undefined,
          given: string | undefined,
          opts: ThreadOptions & { note?: string },
        ) => {
          const { session: ref, rest } = sessionAndRest([id, given], opts, ['seq']);
          const seq = parseArgument(positiveInteger('seq'), rest[0]!);
          const { wasPinned, ...done } = await pinCheckpoint(
            await ctx.store(),
            ref.sessionId,
            seq,
            opts.note,
          );
          ctx.output(done, () => ctx.print(`${ref.sessionId}: ${pinLine(done, wasPinned)}`));
        },
      ),
    'ckpt pin chat-1 12 --note "the answer the customer approved"',
  );

  example(
    sessionArguments(
      program
        .command('unpin')
        .description('unpin a checkpoint, so that prune and sweep may remove it again'),
      ['seq', 'the checkpoint to unpin'],
    ).action(async (id: string | undefined, given: string | undefined, opts: ThreadOptions) => {
      const { session: ref, rest } = sessionAndRest([id, given], opts, ['seq']);
      const seq = parseArgument(positiveInteger('seq'), rest[0]!);
      const done = await unpinCheckpoint(await ctx.store(), ref.sessionId, seq);
      ctx.output(done, () =>
        ctx.print(
          done.changed
            ? `${ref.sessionId}: unpinned ${seq}`
            : `${ref.sessionId}: ${seq} was not pinned`,
        ),
      );
    }),
    'ckpt unpin chat-1 12',
  );
}
