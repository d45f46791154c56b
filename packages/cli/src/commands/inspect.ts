/** Reading a store: sessions, show, tree, transcript, history. */
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { brief, shortTime } from '../io.js';
import { positiveInteger } from '../parse.js';
import {
  all,
  sessionsPage,
  sessionTree,
  showCheckpoint,
  timeline,
  transcriptPage,
} from '../reads.js';
import { renderTree } from '../tree.js';
import { example } from './help.js';

const forkedFrom = (f: { sessionId: string; seq: number } | null) =>
  f === null ? '' : `${f.sessionId} at ${f.seq}`;

export function registerInspect(program: Command, ctx: Context): void {
  example(
    program
      .command('sessions')
      .description('list the sessions, most recently updated first')
      .option('--limit <n>', 'sessions per page (1 to 1000)', positiveInteger('limit'), 50)
      .option('--cursor <cursor>', 'the page after the one that printed this cursor')
      .option('--all', 'every session, page after page')
      .action(async (opts: { limit: number; cursor?: string; all?: boolean }) => {
        const store = await ctx.store();
        const page = opts.all
          ? {
              items: await all((cursor) => sessionsPage(store, { limit: 1000, cursor })),
              cursor: null,
            }
          : await sessionsPage(store, { limit: opts.limit, cursor: opts.cursor });
        ctx.output(page, () => {
          ctx.table(
            ['SESSION', 'HEAD', 'CHECKPOINTS', 'UPDATED', 'CREATED', 'FORKED FROM'],
            page.items.map((s) => [
              s.sessionId,
              s.head,
              s.checkpoints,
              shortTime(s.updatedAt),
              shortTime(s.createdAt),
              forkedFrom(s.forkedFrom),
            ]),
          );
          if (page.cursor !== null) ctx.note(`more: ckpt sessions --cursor ${page.cursor}`);
        });
      }),
    'ckpt sessions --store sqlite:./agent.db --limit 20',
  );

  example(
    program
      .command('show')
      .description("a session's summary and its head checkpoint (or another seq)")
      .argument('<id>', 'the session')
      .option('--seq <seq>', 'show this checkpoint instead of the head', positiveInteger('seq'))
      .action(async (id: string, opts: { seq?: number }) => {
        const shown = await showCheckpoint(await ctx.store(), id, opts.seq);
        const { info, checkpoint } = shown;
        ctx.output(shown, () => {
          ctx.table(
            ['SESSION', 'HEAD', 'CHECKPOINTS', 'UPDATED', 'CREATED', 'FORKED FROM'],
            [
              [
                info.sessionId,
                info.head,
                info.checkpoints,
                shortTime(info.updatedAt),
                shortTime(info.createdAt),
                forkedFrom(info.forkedFrom),
              ],
            ],
          );
          const c = ctx.colors;
          ctx.print(
            `\n${c.bold(`checkpoint ${checkpoint.seq}`)}  parent ${checkpoint.parent ?? 'none'}  ${shortTime(checkpoint.createdAt)}`,
          );
          ctx.print(`${c.bold('metadata')} ${JSON.stringify(checkpoint.metadata)}`);
          ctx.print(`${c.bold('data')} ${JSON.stringify(checkpoint.data, null, 2)}`);
        });
      }),
    'ckpt show chat-1 --seq 3',
  );

  example(
    program
      .command('tree')
      .description(
        'every stored checkpoint of a session as a branch tree: the head, the active timeline, and the checkpoints other sessions were forked from',
      )
      .argument('<id>', 'the session')
      .action(async (id: string) => {
        const tree = await sessionTree(await ctx.store(), id);
        const { info, checkpoints: nodes } = tree;
        ctx.output(tree, () => {
          const c = ctx.colors;
          const origin = info.forkedFrom
            ? ` · forked from ${JSON.stringify(info.forkedFrom.sessionId)} at ${info.forkedFrom.seq}`
            : '';
          ctx.print(
            `${c.bold(id)} · head ${info.head} · ${info.checkpoints} checkpoint${info.checkpoints === 1 ? '' : 's'}${origin}`,
          );
          for (const line of renderTree(nodes, c)) ctx.print(line);
        });
      }),
    'ckpt tree chat-1',
  );

  example(
    program
      .command('transcript')
      .description("the items of the session's active timeline, oldest first")
      .argument('<id>', 'the session')
      .option('--limit <n>', 'the newest n items (1 to 1000)', positiveInteger('limit'), 50)
      .action(async (id: string, opts: { limit: number }) => {
        const page = await transcriptPage(await ctx.store(), id, {
          limit: Math.min(opts.limit, 1000),
        });
        ctx.output(page, () => {
          ctx.table(
            ['SEQ', 'AT', 'ITEM'],
            [...page.items]
              .reverse()
              .map((e) => [e.seq, shortTime(e.createdAt), brief(e.item, 100)]),
          );
          if (page.cursor !== null)
            ctx.note(
              `older items: ckpt transcript ${JSON.stringify(id)} --limit ${opts.limit * 2}`,
            );
        });
      }),
    'ckpt transcript chat-1 --limit 20',
  );

  example(
    program
      .command('history')
      .description('the active timeline: the head and its stored ancestors, oldest first')
      .argument('<id>', 'the session')
      .action(async (id: string) => {
        const checkpoints = await timeline(await ctx.store(), id);
        ctx.output(checkpoints, () => {
          ctx.table(
            ['SEQ', 'PARENT', 'CREATED', 'METADATA'],
            checkpoints.map((cp) => [
              cp.seq,
              cp.parent ?? '',
              shortTime(cp.createdAt),
              brief(cp.metadata),
            ]),
          );
        });
      }),
    'ckpt history chat-1 --json',
  );
}
