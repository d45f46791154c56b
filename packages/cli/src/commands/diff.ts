/** `ckpt diff`: what changed in a session's data and metadata between two of its checkpoints. */
import type { Command } from 'commander';
import { type Context, type WideOptions, wideOptions } from '../context.js';
import { brief, count } from '../io.js';
import type { JsonChange } from '../json-diff.js';
import { parseArgument, positiveInteger } from '../parse.js';
import { checkpointDiff } from '../reads.js';
import { sessionAndRest, sessionArguments, type ThreadOptions } from '../session-ref.js';
import { example } from './help.js';

const MARK = { add: '+', remove: '-', change: '~' } as const;

export function registerDiff(program: Command, ctx: Context): void {
  example(
    wideOptions(
      sessionArguments(
        program
          .command('diff')
          .description(
            'what changed in the data and metadata from checkpoint a to checkpoint b: each JSON path added, removed or changed',
          ),
        ['a', 'the checkpoint to compare from'],
        ['b', 'the checkpoint to compare to'],
      ),
    ).action(
      async (
        id: string | undefined,
        a: string | undefined,
        b: string | undefined,
        opts: ThreadOptions & WideOptions,
      ) => {
        const { session: ref, rest } = sessionAndRest([id, a, b], opts, ['a', 'b']);
        const [from, to] = rest.map((seq, i) =>
          parseArgument(positiveInteger(i === 0 ? 'a' : 'b'), seq),
        ) as [number, number];
        const changes = await checkpointDiff(await ctx.store(), ref, to, from, (words) =>
          ctx.commandLine(words),
        );
        ctx.output(changes, () =>
          printChanges(ctx, changes, `${ref.sessionId} ${from} → ${to}`, ctx.width(opts)),
        );
      },
    ),
    'ckpt diff chat-1 3 5',
    'ckpt diff --thread thread-7 1 2 --json',
  );
}

/** The changes for a person: one line each, `+` added, `-` removed, `~` changed. */
function printChanges(ctx: Context, changes: JsonChange[], span: string, width: number | null) {
  const c = ctx.colors;
  if (changes.length === 0) {
    ctx.print(`${span}: the same data and metadata`);
    return;
  }
  ctx.print(`${span}: ${count(changes.length, 'change')}`);
  const colour = { add: c.green, remove: c.red, change: c.yellow };
  for (const change of changes) {
    const head = `${MARK[change.op]} ${change.path}  `;
    const room = width === null ? null : Math.max(width - head.length, 10);
    const value =
      change.op === 'add'
        ? brief(JSON.stringify(change.after), room)
        : change.op === 'remove'
          ? brief(JSON.stringify(change.before), room)
          : brief(`${JSON.stringify(change.before)} → ${JSON.stringify(change.after)}`, room);
    ctx.print(colour[change.op](`${head}${value}`));
  }
}
