/** Reading a store: sessions, show, tree, transcript, history. */
import { allItems, allSessionIds, type CheckpointStore, CkptError } from '@ckpt/core';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { brief, shellWord, shortTime } from '../io.js';
import { positiveInteger } from '../parse.js';
import { renderTree, treeNodes } from '../tree.js';
import { example } from './help.js';

/** Every item of a paged listing, in an array. */
async function all<T>(
  fetch: (cursor: string | null) => Promise<{ items: T[]; cursor: string | null }>,
): Promise<T[]> {
  const items: T[] = [];
  for await (const item of allItems(fetch)) items.push(item);
  return items;
}

/** The session's summary, or NOT_FOUND saying how to see which sessions there are. */
async function existing(store: CheckpointStore, id: string) {
  const info = await store.info(id);
  if (info === null) {
    throw new CkptError(
      'NOT_FOUND',
      `session ${JSON.stringify(id)} does not exist; list the sessions with: ckpt sessions`,
      { details: { argument: 'sessionId' } },
    );
  }
  return info;
}

const forkedFrom = (f: { sessionId: string; seq: number } | null) =>
  f === null ? '' : `${f.sessionId} at ${f.seq}`;

export function registerInspect(program: Command, ctx: Context): void {
  example(
    program
      .command('sessions')
      .description('list the sessions, most recently updated first')
      .option('--prefix <p>', 'only the sessions whose id starts with p (found by an index)')
      .option('--limit <n>', 'sessions per page (1 to 1000)', positiveInteger('limit'), 50)
      .option('--cursor <cursor>', 'the page after the one that printed this cursor')
      .option('--all', 'every session, page after page')
      .action(async (opts: { prefix?: string; limit: number; cursor?: string; all?: boolean }) => {
        const store = await ctx.store();
        const { prefix } = opts;
        const page = opts.all
          ? {
              items: await all((cursor) => store.sessions({ prefix, limit: 1000, cursor })),
              cursor: null,
            }
          : await store.sessions({ prefix, limit: opts.limit, cursor: opts.cursor ?? null });
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
          // A cursor continues the listing of its own prefix only.
          const same = prefix === undefined ? '' : ` --prefix ${shellWord(prefix)}`;
          if (page.cursor !== null) ctx.note(`more: ckpt sessions${same} --cursor ${page.cursor}`);
        });
      }),
    'ckpt sessions --store sqlite:./agent.db --limit 20',
    "ckpt sessions --prefix 'user-42/' --all",
  );

  example(
    program
      .command('show')
      .description("a session's summary and its head checkpoint (or another seq)")
      .argument('<id>', 'the session')
      .option('--seq <seq>', 'show this checkpoint instead of the head', positiveInteger('seq'))
      .action(async (id: string, opts: { seq?: number }) => {
        const store = await ctx.store();
        const info = await existing(store, id);
        const checkpoint = await store.load(id, opts.seq);
        if (checkpoint === null) {
          throw new CkptError(
            'NOT_FOUND',
            `session ${JSON.stringify(id)} has no stored checkpoint ${opts.seq}; see its checkpoints with: ckpt tree ${JSON.stringify(id)}`,
            { details: { argument: 'seq' } },
          );
        }
        ctx.output({ info, checkpoint }, () => {
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
        const store = await ctx.store();
        const info = await existing(store, id);
        const checkpoints = await all((cursor) => store.list(id, { limit: 1000, cursor }));
        const timeline = await store.history(id);
        const forks = new Map<number, string[]>();
        for await (const other of allSessionIds(store)) {
          const from = (await store.info(other))?.forkedFrom;
          if (from?.sessionId === id) forks.set(from.seq, [...(forks.get(from.seq) ?? []), other]);
        }
        const nodes = treeNodes(checkpoints, info.head, timeline, forks);
        ctx.output({ session: info, checkpoints: nodes }, () => {
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
        const store = await ctx.store();
        await existing(store, id);
        const page = await store.transcript(id, { limit: Math.min(opts.limit, 1000) });
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
        const store = await ctx.store();
        await existing(store, id);
        const seqs = await store.history(id);
        const infos = new Map(
          (await all((cursor) => store.list(id, { limit: 1000, cursor }))).map((cp) => [
            cp.seq,
            cp,
          ]),
        );
        const timeline = seqs.map((seq) => infos.get(seq)).filter((cp) => cp !== undefined);
        ctx.output(timeline, () => {
          ctx.table(
            ['SEQ', 'PARENT', 'CREATED', 'METADATA'],
            timeline.map((cp) => [
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
