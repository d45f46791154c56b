/** Reading a store: sessions, show, tree, transcript, history. */
import type { SessionInfo } from '@ckpt/core';
import type { Command } from 'commander';
import { type Context, type WideOptions, wideOptions } from '../context.js';
import { brief, count, cut, shellWord, shortTime } from '../io.js';
import { itemLine } from '../item-line.js';
import { positiveInteger, tagOption } from '../parse.js';
import {
  allPages,
  sessionsPage,
  sessionTree,
  showCheckpoint,
  timeline,
  transcriptPage,
} from '../reads.js';
import { sessionAndRest, sessionArguments, type ThreadOptions } from '../session-ref.js';
import { type Tags, tagsLine, tagsRunTogether, tagWords } from '../tag-pairs.js';
import { pinLabel, renderTree } from '../tree.js';
import { example } from './help.js';

const forkedFrom = (f: { sessionId: string; seq: number } | null) =>
  f === null ? '' : `${f.sessionId} at ${f.seq}`;

const SESSION_HEAD = [
  'SESSION',
  'HEAD',
  'CHECKPOINTS',
  'UPDATED',
  'CREATED',
  'FORKED FROM',
  'TAGS',
];
const sessionRow = (s: SessionInfo) => [
  s.sessionId,
  s.head,
  s.checkpoints,
  shortTime(s.updatedAt),
  shortTime(s.createdAt),
  forkedFrom(s.forkedFrom),
  tagsLine(s.tags),
];

/**
 * On stderr, when a listing by `where` found nothing and a value reads as several tags run
 * together (`--where user=ann,status=open`): how to ask for each. Stdout stays as it was.
 */
function hintRunTogether(ctx: Context, where: Tags | undefined): void {
  const found = tagsRunTogether(where ?? {});
  if (found === null) return;
  const words = found.meant.map((word) => `--where ${shellWord(word)}`).join(' ');
  ctx.note(
    `ckpt: no session has ${found.key}=${JSON.stringify(found.value)}; to ask for ${found.meant.length === 2 ? 'two' : found.meant.length} tags, give --where ${found.meant.length === 2 ? 'twice' : 'once for each'}: ${words}`,
  );
}

export function registerInspect(program: Command, ctx: Context): void {
  example(
    wideOptions(
      program
        .command('sessions')
        .description('list the sessions, most recently updated first')
        .option('--prefix <p>', 'only the sessions whose id starts with p (found by an index)')
        .option(
          '--where <key=value>',
          'only the sessions with this tag; repeat it for sessions with every tag given (found by an index)',
          tagOption(),
        )
        .option('--limit <n>', 'sessions per page (1 to 1000)', positiveInteger('limit'), 50)
        .option('--cursor <cursor>', 'the page after the one that printed this cursor')
        .option('--all', 'every session, page after page'),
    ).action(
      async (
        opts: WideOptions & {
          prefix?: string;
          where?: Tags;
          limit: number;
          cursor?: string;
          all?: boolean;
        },
        command: Command,
      ) => {
        const store = await ctx.store();
        const { prefix, where } = opts;
        if (opts.all) {
          // Printed a page at a time, as it is read: a large store is never held whole.
          let listed = 0;
          const pages = allPages(async (cursor) => {
            const page = await sessionsPage(store, { prefix, where, limit: 1000, cursor });
            listed += page.items.length;
            return page;
          });
          await ctx.outputPages(pages, SESSION_HEAD, sessionRow);
          if (listed === 0) hintRunTogether(ctx, where);
          return;
        }
        const page = await sessionsPage(store, {
          prefix,
          where,
          limit: opts.limit,
          cursor: opts.cursor,
        });
        ctx.output(page, () => {
          ctx.table(SESSION_HEAD, page.items.map(sessionRow), ctx.width(opts));
          if (page.cursor !== null) {
            // A cursor continues the listing of its own prefix and tags only.
            const prefixed = prefix === undefined ? [] : ['--prefix', prefix];
            const tagged = tagWords(where ?? {}).flatMap((word) => ['--where', word]);
            const limit =
              command.getOptionValueSource('limit') === 'cli'
                ? ['--limit', String(opts.limit)]
                : [];
            const next = ['sessions', ...prefixed, ...tagged, ...limit, '--cursor', page.cursor];
            ctx.note(`more: ${ctx.commandLine(next)}`);
          }
        });
        if (page.items.length === 0 && opts.cursor === undefined) hintRunTogether(ctx, where);
      },
    ),
    'ckpt sessions --store sqlite:./agent.db --limit 20',
    "ckpt sessions --prefix 'user-42/' --all",
    'ckpt sessions --where user=ann --where status=open',
  );

  example(
    wideOptions(
      sessionArguments(
        program
          .command('show')
          .description(
            "a session's summary and its head checkpoint (or another seq): metadata, data, and the transcript items it added, messages as role and text",
          ),
      ).option('--seq <seq>', 'show this checkpoint instead of the head', positiveInteger('seq')),
    ).action(
      async (id: string | undefined, opts: ThreadOptions & WideOptions & { seq?: number }) => {
        const { session: ref } = sessionAndRest([id], opts);
        const shown = await showCheckpoint(await ctx.store(), ref, opts.seq, (words) =>
          ctx.commandLine(words),
        );
        const { info, checkpoint, transcript } = shown;
        ctx.output(shown, () => {
          ctx.table(SESSION_HEAD, [sessionRow(info)]);
          const c = ctx.colors;
          ctx.print(
            `\n${c.bold(`checkpoint ${checkpoint.seq}`)}  parent ${checkpoint.parent ?? 'none'}  ${shortTime(checkpoint.createdAt)}`,
          );
          ctx.print(`${c.bold('metadata')} ${JSON.stringify(checkpoint.metadata)}`);
          ctx.print(`${c.bold('data')} ${JSON.stringify(checkpoint.data, null, 2)}`);
          if (transcript.length > 0) {
            const width = ctx.width(opts);
            ctx.print(c.bold('transcript'));
            for (const item of transcript) ctx.print(cut(`  ${itemLine(item, c)}`, width));
          }
        });
      },
    ),
    'ckpt show chat-1 --seq 3',
    'ckpt show --thread thread-7 --json',
  );

  example(
    wideOptions(
      sessionArguments(
        program
          .command('tree')
          .description(
            'every stored checkpoint of a session as a branch tree: the head, the active timeline, and the checkpoints other sessions were forked from',
          ),
      ),
    ).action(async (id: string | undefined, opts: ThreadOptions & WideOptions) => {
      const { session: ref } = sessionAndRest([id], opts);
      const tree = await sessionTree(await ctx.store(), ref);
      const { sessionId, info, checkpoints: nodes } = tree;
      ctx.output(tree, () => {
        const c = ctx.colors;
        const origin = info.forkedFrom
          ? ` · forked from ${JSON.stringify(info.forkedFrom.sessionId)} at ${info.forkedFrom.seq}`
          : '';
        const tags = Object.keys(info.tags).length > 0 ? ` · ${tagsLine(info.tags)}` : '';
        ctx.print(
          cut(
            `${c.bold(sessionId)} · head ${info.head} · ${count(info.checkpoints, 'checkpoint')}${origin}${tags}`,
            ctx.width(opts),
          ),
        );
        for (const line of renderTree(nodes, c, ctx.width(opts))) ctx.print(line);
      });
    }),
    'ckpt tree chat-1',
    'ckpt tree --thread thread-7 --ns subgraph',
  );

  example(
    wideOptions(
      sessionArguments(
        program
          .command('transcript')
          .description(
            "the items of the session's active timeline, oldest first; messages as role and text, anything else as JSON",
          ),
      ).option('--limit <n>', 'the newest n items (1 to 1000)', positiveInteger('limit'), 50),
    ).action(
      async (id: string | undefined, opts: ThreadOptions & WideOptions & { limit: number }) => {
        const { session: ref } = sessionAndRest([id], opts);
        const page = await transcriptPage(await ctx.store(), ref, {
          limit: Math.min(opts.limit, 1000),
        });
        ctx.output(page, () => {
          const c = ctx.colors;
          ctx.table(
            ['SEQ', 'AT', 'ITEM'],
            [...page.items]
              .reverse()
              .map((e) => [e.seq, shortTime(e.createdAt), itemLine(e.item, c)]),
            ctx.width(opts),
          );
          if (page.cursor !== null) {
            const more = Math.min(opts.limit * 2, 1000);
            ctx.note(
              `older items: ${ctx.commandLine(['transcript', ...ref.words, '--limit', String(more)])}`,
            );
          }
        });
      },
    ),
    'ckpt transcript chat-1 --limit 20',
    'ckpt transcript --thread thread-7 --wide',
  );

  example(
    wideOptions(
      sessionArguments(
        program
          .command('history')
          .description('the active timeline: the head and its stored ancestors, oldest first'),
      ),
    ).action(async (id: string | undefined, opts: ThreadOptions & WideOptions) => {
      const { session: ref } = sessionAndRest([id], opts);
      const checkpoints = await timeline(await ctx.store(), ref);
      ctx.output(checkpoints, () => {
        ctx.table(
          ['SEQ', 'PARENT', 'CREATED', 'PIN', 'METADATA'],
          checkpoints.map((cp) => [
            cp.seq,
            cp.parent ?? '',
            shortTime(cp.createdAt),
            pinLabel(cp, ctx.colors),
            brief(cp.metadata, null),
          ]),
          ctx.width(opts),
        );
      });
    }),
    'ckpt history chat-1 --json',
  );
}
