/** A session's tags: printed, or set, removed, replaced or cleared. */
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { existingSession } from '../reads.js';
import { sessionAndRest, sessionArguments, type ThreadOptions } from '../session-ref.js';
import { BadTag, tagKey, tagsOf, tagsOrNone } from '../tag-pairs.js';
import { UsageError } from '../usage-error.js';
import { tagSession } from '../writes.js';
import { example } from './help.js';

interface TagOptions extends ThreadOptions {
  remove?: string[];
  replace?: boolean;
  clear?: boolean;
}

/** `read()`, whose BadTag is a usage error: a tag that cannot be stored, refused before the store is opened. */
function checked<T>(read: () => T): T {
  try {
    return read();
  } catch (err) {
    if (err instanceof BadTag) throw new UsageError(err.message);
    throw err;
  }
}

export function registerTag(program: Command, ctx: Context): void {
  example(
    sessionArguments(
      program
        .command('tag')
        .description(
          "a session's tags: without tags given, print them; key=value sets a tag and keeps the others, --remove takes one away, --replace makes the tags given the whole set, --clear removes them all",
        ),
    )
      .argument('[tags...]', 'tags to set, each key=value')
      .usage(
        '[options] (<id> | --thread <thread_id> [--ns <checkpoint_ns>]) [key=value ...] [--remove <key>] [--replace | --clear]',
      )
      .option(
        '--remove <key>',
        'remove this tag (repeat it for several)',
        (key: string, previous: string[] = []) => [...previous, key],
      )
      .option('--replace', 'the tags given are the whole set: every other tag is removed')
      .option('--clear', 'remove every tag')
      .action(async (id: string | undefined, words: string[], opts: TagOptions) => {
        const positionals = [id, ...words].filter((word): word is string => word !== undefined);
        // With --thread, every word is a tag; else the first is the session.
        const named = opts.thread === undefined ? positionals.slice(0, 1) : [];
        const { session: ref } = sessionAndRest(named, opts);
        const set = checked(() => tagsOf(positionals.slice(named.length)));
        const remove = checked(() => (opts.remove ?? []).map(tagKey));
        const given = Object.keys(set).length > 0;
        if (opts.clear && (given || opts.replace || remove.length > 0)) {
          throw new UsageError(
            '--clear removes every tag, and takes nothing else; to set exactly some tags, give them with --replace.',
          );
        }
        if (opts.replace && !given) {
          throw new UsageError(
            '--replace needs the tags that make the whole set (key=value …); to remove every tag, give --clear.',
          );
        }
        if (opts.replace && remove.length > 0) {
          throw new UsageError('--replace removes every tag not given: leave --remove out.');
        }
        const both = remove.find((key) => Object.hasOwn(set, key));
        if (both !== undefined) {
          throw new UsageError(`the tag ${JSON.stringify(both)} is both set and removed.`);
        }
        const store = await ctx.store();
        const before = await existingSession(store, ref);
        if (!given && remove.length === 0 && !opts.clear) {
          const shown = { sessionId: ref.sessionId, tags: before.tags };
          ctx.output(shown, () => ctx.print(`${ref.sessionId}: ${tagsOrNone(before.tags)}`));
          return;
        }
        const done = await tagSession(store, before, {
          set,
          remove,
          replace: opts.replace === true || opts.clear === true,
        });
        ctx.output(done, () =>
          ctx.print(
            done.changed
              ? `${ref.sessionId}: ${tagsOrNone(done.tags)} (before: ${tagsOrNone(done.previous)})`
              : `${ref.sessionId}: ${tagsOrNone(done.tags)} (already so; nothing written)`,
          ),
        );
      }),
    'ckpt tag chat-1',
    'ckpt tag chat-1 status=closed reviewer=ann',
    'ckpt tag chat-1 --remove reviewer',
    'ckpt tag chat-1 --replace user=ann status=open',
    'ckpt tag --thread thread-7 --clear',
  );
}
