/** Reading a store: sessions, show, tree, transcript, history. */
import {
  allItems,
  allSessionIds,
  type CheckpointStore,
  CkptError,
  type JsonValue,
  type SessionInfo,
} from '@ckpt/core';
import type { Command } from 'commander';
import { type Context, type WideOptions, wideOptions } from '../context.js';
import { brief, count, cut, shellWord, shortTime } from '../io.js';
import { itemLine } from '../item-line.js';
import { positiveInteger } from '../parse.js';
import {
  type SessionRef,
  sessionAndRest,
  sessionArguments,
  type ThreadOptions,
  threadSessionId,
} from '../session-ref.js';
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
export async function existing(store: CheckpointStore, ref: SessionRef): Promise<SessionInfo> {
  const info = await store.info(ref.sessionId);
  if (info === null) {
    const isThread = ref.words[0] === '--thread';
    const kept = isThread
      ? ` (a LangGraph saver keeps it in session ${JSON.stringify(ref.sessionId)})`
      : '';
    // Someone who gives a LangGraph thread's id as a session id is told how to name it.
    const thread =
      !isThread && (await store.info(threadSessionId(ref.sessionId))) !== null
        ? `; a LangGraph thread has that id: give --thread ${shellWord(ref.sessionId)}`
        : '; list the sessions with: ckpt sessions';
    throw new CkptError('NOT_FOUND', `${ref.label} does not exist${kept}${thread}`, {
      details: { argument: 'sessionId' },
    });
  }
  return info;
}

/** The transcript items checkpoint `seq` appended, in order. */
async function itemsOf(
  store: CheckpointStore,
  sessionId: string,
  seq: number,
  timeline: number[],
): Promise<JsonValue[]> {
  if (timeline.includes(seq)) {
    // The transcript walks the active timeline newest first: its items come before older ones.
    const items: JsonValue[] = [];
    for await (const entry of allItems((cursor) =>
      store.transcript(sessionId, { limit: 1000, cursor }),
    )) {
      if (entry.seq < seq) break;
      if (entry.seq === seq) items.push(entry.item);
    }
    return items.reverse();
  }
  const session = await store.exportSession(sessionId);
  for await (const cp of session?.checkpoints ?? []) {
    if (cp.seq === seq) return cp.transcript;
  }
  return [];
}

const forkedFrom = (f: { sessionId: string; seq: number } | null) =>
  f === null ? '' : `${f.sessionId} at ${f.seq}`;

const SESSION_HEAD = ['SESSION', 'HEAD', 'CHECKPOINTS', 'UPDATED', 'CREATED', 'FORKED FROM'];
const sessionRow = (s: SessionInfo) => [
  s.sessionId,
  s.head,
  s.checkpoints,
  shortTime(s.updatedAt),
  shortTime(s.createdAt),
  forkedFrom(s.forkedFrom),
];

export function registerInspect(program: Command, ctx: Context): void {
  example(
    program
      .command('sessions')
      .description('list the sessions, most recently updated first')
      .option('--limit <n>', 'sessions per page (1 to 1000)', positiveInteger('limit'), 50)
      .option('--cursor <cursor>', 'the page after the one that printed this cursor')
      .option('--all', 'every session, page after page')
      .action(async (opts: { limit: number; cursor?: string; all?: boolean }, command: Command) => {
        const store = await ctx.store();
        const page = opts.all
          ? { items: await all((cursor) => store.sessions({ limit: 1000, cursor })), cursor: null }
          : await store.sessions({ limit: opts.limit, cursor: opts.cursor ?? null });
        ctx.output(page, () => {
          ctx.table(SESSION_HEAD, page.items.map(sessionRow));
          if (page.cursor !== null) {
            const limit =
              command.getOptionValueSource('limit') === 'cli'
                ? ['--limit', String(opts.limit)]
                : [];
            ctx.note(`more: ${ctx.commandLine(['sessions', ...limit, '--cursor', page.cursor])}`);
          }
        });
      }),
    'ckpt sessions --store sqlite:./agent.db --limit 20',
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
        const store = await ctx.store();
        const info = await existing(store, ref);
        const checkpoint = await store.load(ref.sessionId, opts.seq);
        if (checkpoint === null) {
          throw new CkptError(
            'NOT_FOUND',
            `${ref.label} has no stored checkpoint ${opts.seq}; see its checkpoints with: ${ctx.commandLine(['tree', ...ref.words])}`,
            { details: { argument: 'seq' } },
          );
        }
        const transcript = await itemsOf(
          store,
          ref.sessionId,
          checkpoint.seq,
          await store.history(ref.sessionId),
        );
        ctx.output({ sessionId: ref.sessionId, info, checkpoint, transcript }, () => {
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
      const store = await ctx.store();
      const info = await existing(store, ref);
      const sessionId = ref.sessionId;
      const checkpoints = await all((cursor) => store.list(sessionId, { limit: 1000, cursor }));
      const timeline = await store.history(sessionId);
      const forks = new Map<number, string[]>();
      for await (const other of allSessionIds(store)) {
        const from = (await store.info(other))?.forkedFrom;
        if (from?.sessionId === sessionId)
          forks.set(from.seq, [...(forks.get(from.seq) ?? []), other]);
      }
      const nodes = treeNodes(checkpoints, info.head, timeline, forks);
      ctx.output({ sessionId, info, checkpoints: nodes }, () => {
        const c = ctx.colors;
        const origin = info.forkedFrom
          ? ` · forked from ${JSON.stringify(info.forkedFrom.sessionId)} at ${info.forkedFrom.seq}`
          : '';
        ctx.print(
          `${c.bold(sessionId)} · head ${info.head} · ${count(info.checkpoints, 'checkpoint')}${origin}`,
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
        const store = await ctx.store();
        await existing(store, ref);
        const page = await store.transcript(ref.sessionId, { limit: Math.min(opts.limit, 1000) });
        ctx.output({ sessionId: ref.sessionId, ...page }, () => {
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
      const store = await ctx.store();
      await existing(store, ref);
      const seqs = await store.history(ref.sessionId);
      const infos = new Map(
        (await all((cursor) => store.list(ref.sessionId, { limit: 1000, cursor }))).map((cp) => [
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
            brief(cp.metadata, null),
          ]),
          ctx.width(opts),
        );
      });
    }),
    'ckpt history chat-1 --json',
  );
}
