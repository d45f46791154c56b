/** Moving data: export (to a file or stdout), import (from a file or stdin), copy (store to store). */

import { once } from 'node:events';
import { type FileHandle, open, rename, rm } from 'node:fs/promises';
import { basename, dirname, join } from 'node:path';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import {
  CkptError,
  copyStore,
  exportStore,
  importStore,
  isCkptError,
  type TransferCounts,
} from '@ckpt/core';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { Interrupted, interruptible, untilAborted } from '../interrupt.js';
import { count } from '../io.js';
import { oneOf, positiveInteger } from '../parse.js';
import { Progress, sessionTotal } from '../progress.js';
import { threadSessionId } from '../session-ref.js';
import { UsageError } from '../usage-error.js';
import { example } from './help.js';

const IF_EXISTS = ['fail', 'skip', 'replace'] as const;
type IfExists = (typeof IF_EXISTS)[number];

/** What was moved: `imported 1 session, 3 checkpoints and 0 state values in 0.2 s`. */
function summary(verb: string, counts: TransferCounts, seconds: number): string {
  const skipped =
    counts.skipped > 0 ? ` (${count(counts.skipped, 'session')} already there, skipped)` : '';
  return `${verb} ${count(counts.sessions, 'session')}, ${count(counts.checkpoints, 'checkpoint')} and ${count(counts.state, 'state value')} in ${seconds.toFixed(1)} s${skipped}`;
}

/** What a copy or import stopped by Ctrl-C did, and the command that takes up where it stopped. */
function stopped(
  verb: string,
  counts: TransferCounts,
  total: number | null,
  where: string,
  again: string,
): string {
  const done = counts.sessions + counts.skipped;
  const skipped = counts.skipped > 0 ? `, ${counts.skipped} already there and skipped` : '';
  return `stopped after ${total === null ? count(done, 'session') : `${done} of ${count(total, 'session')}`} (${counts.sessions} ${verb}${skipped}); every session ${where} is whole or absent. To take up where it stopped, run${again}`;
}

/** Why a file cannot be used, in words. */
function fileTrouble(err: unknown): string {
  const code = (err as NodeJS.ErrnoException).code;
  if (code === 'ENOENT') return 'there is no such file';
  if (code === 'EACCES' || code === 'EPERM') return 'permission denied';
  if (code === 'EISDIR') return 'it is a directory';
  if (code === 'ENOTDIR') return 'a part of its path is not a directory';
  return (err as Error).message;
}

/** The export at `path`, opened for reading, or a usage error saying why it cannot be. */
async function openExport(path: string): Promise<{ file: FileHandle; size: number }> {
  let file: FileHandle | undefined;
  try {
    file = await open(path, 'r');
    const stats = await file.stat();
    if (stats.isDirectory()) throw Object.assign(new Error(), { code: 'EISDIR' });
    return { file, size: stats.size };
  } catch (err) {
    await file?.close();
    throw new UsageError(
      `cannot read ${JSON.stringify(path)}: ${fileTrouble(err)}; give the path of an export, or - (or nothing) to read stdin.`,
    );
  }
}

/**
 * A file to write in place of `path`, which appears there only whole: it is written beside
 * it under another name, then renamed over it (`keep`), or removed (`discard`), so that an
 * export that fails halfway leaves no partial file, and an earlier one at `path` as it was.
 */
async function openBeside(path: string): Promise<{
  handle: FileHandle;
  /** The file written meanwhile. */
  partial: string;
  keep(): Promise<void>;
  discard(): Promise<void>;
}> {
  const partial = join(dirname(path), `.${basename(path)}.${process.pid}.partial`);
  let handle: FileHandle;
  try {
    handle = await open(partial, 'w', 0o600);
  } catch (err) {
    throw new UsageError(
      `cannot write ${JSON.stringify(path)}: ${fileTrouble(err)}; give a path in a directory that exists and can be written.`,
    );
  }
  return {
    handle,
    partial,
    keep: async () => {
      try {
        await rename(partial, path);
      } catch (err) {
        await rm(partial, { force: true });
        throw new UsageError(
          `cannot write ${JSON.stringify(path)}: ${fileTrouble(err)}; give a path that is not a directory and can be written.`,
        );
      }
    },
    discard: () => rm(partial, { force: true }),
  };
}

/**
 * A CONFLICT for a session already there, said for a person at a command line, where
 * `--if-exists` is what decides; any other error as it is.
 */
function conflictForCli(err: unknown, where: string): unknown {
  const sessionId = isCkptError(err, 'CONFLICT') ? err.details.sessionId : undefined;
  if (typeof sessionId !== 'string') return err;
  const line = (err as CkptError).details.line;
  return new CkptError(
    'CONFLICT',
    `${typeof line === 'number' ? `export line ${line}: ` : ''}session ${JSON.stringify(sessionId)} is already in ${where}, so nothing of it was written. Run the same command again with --if-exists skip to leave the sessions already there as they are (it takes up where this one stopped), or with --if-exists replace to overwrite them.`,
    { details: (err as CkptError).details, cause: err },
  );
}

/**
 * UNSUPPORTED for tags (a session with tags, into a store whose backend cannot keep them),
 * said for a person at a command line: which session, that nothing of it was written, and
 * what to do; any other error as it is. `again` is the command that takes up where this one
 * stopped.
 */
function tagsNotKept(err: unknown, backend: string | undefined, again: string): unknown {
  if (!isCkptError(err, 'UNSUPPORTED') || err.details.capability !== 'tags') return err;
  const { line, sessionId } = err.details;
  const at = typeof line === 'number' ? `export line ${line}: ` : '';
  const which =
    typeof sessionId === 'string' ? `session ${JSON.stringify(sessionId)}` : 'a session';
  const kind = backend === undefined ? 'its backend' : `its backend (${backend})`;
  return new CkptError(
    'UNSUPPORTED',
    `${at}${which} has tags, which the target store cannot keep: ${kind} has no 'tags' capability, as one written before tags. Nothing of that session was written; the sessions before it were, each whole. Upgrade the target's adapter to one that keeps tags, then take up where this stopped: ${again}`,
    { details: err.details, cause: err },
  );
}

/** The sessions `--session` and `--thread` (with `--ns`) name, or undefined for all. */
function sessionsNamed(opts: {
  session?: string[];
  thread?: string[];
  ns?: string;
}): string[] | undefined {
  if (opts.ns !== undefined && opts.thread === undefined) {
    throw new UsageError('--ns names the namespace of threads: give --thread <thread_id> too.');
  }
  if (opts.session === undefined && opts.thread === undefined) return undefined;
  return [
    ...(opts.session ?? []),
    ...(opts.thread ?? []).map((thread) => threadSessionId(thread, opts.ns)),
  ];
}

export function registerTransfer(program: Command, ctx: Context): void {
  example(
    program
      .command('export')
      .description(
        'write the store (or some sessions) as JSON Lines, the versioned export format, to a file or stdout',
      )
      .option('-o, --out <file>', 'the file to write (default: stdout)')
      .option('--session <id...>', 'only these sessions (and no state)')
      .option(
        '--thread <thread_id...>',
        'only the sessions of these LangGraph threads (and no state)',
      )
      .option('--ns <checkpoint_ns>', "the threads' checkpoint namespace (default '')")
      .action(
        async (opts: { out?: string; session?: string[]; thread?: string[]; ns?: string }) => {
          const sessionIds = sessionsNamed(opts);
          const file = opts.out === undefined ? undefined : await openBeside(opts.out);
          const out = file === undefined ? ctx.io.stdout : file.handle.createWriteStream();
          let counts: TransferCounts = { sessions: 0, checkpoints: 0, state: 0, skipped: 0 };
          let total: number | null = null;
          let whole = false;
          const started = Date.now();
          let progress: Progress | null = null;
          try {
            const store = await ctx.store();
            total = sessionIds ? sessionIds.length : await sessionTotal(ctx, store);
            progress = Progress.sessions(ctx, total, 'exported');
            await interruptible(
              ctx,
              async (signal) => {
                for await (const line of exportStore(store, {
                  sessionIds,
                  onProgress: (c) => {
                    counts = c;
                    progress?.update(c.sessions, c);
                  },
                })) {
                  signal.throwIfAborted();
                  // Wait for a full buffer to drain, so that memory holds a few lines, not the
                  // store.
                  if (out.write(line) === false) {
                    await once(out as NodeJS.WritableStream, 'drain', { signal });
                  }
                }
              },
              () => {
                const done = `stopped after ${total === null ? count(counts.sessions, 'session') : `${counts.sessions} of ${count(total, 'session')}`}`;
                return file === undefined
                  ? `${done}; the export on stdout is cut short, without its end line (an import of it takes the sessions before the cut, then says so). Run the same command again to export the whole store.`
                  : `${done}; removed the partial file ${JSON.stringify(file.partial)}, so nothing was written to ${JSON.stringify(opts.out)}. Run the same command again to export the whole store.`;
              },
              'stopping the export',
            );
            whole = true;
          } finally {
            progress?.stop();
            if (file !== undefined) {
              const stream = out as NodeJS.WritableStream & { end(): void };
              stream.end();
              await finished(stream).catch(() => {});
              await (whole ? file.keep() : file.discard());
            }
          }
          const done = summary('exported', counts, (Date.now() - started) / 1000);
          if (ctx.json && opts.out !== undefined) ctx.print(JSON.stringify(counts));
          else ctx.note(done);
        },
      ),
    'ckpt export --store sqlite:./agent.db --out backup.jsonl',
    'ckpt export --session chat-1 chat-2 > two.jsonl',
    'ckpt export --thread thread-7 --out thread-7.jsonl',
  );

  example(
    program
      .command('import')
      .description(
        'read an export into the store (created if it is not there); each session all or nothing',
      )
      .argument('[file]', 'the export to read (default or "-": stdin)')
      .option(
        '--if-exists <what>',
        'a session (or state value) that is already there: fail, skip (leave it) or replace',
        oneOf('if-exists', IF_EXISTS),
        'fail',
      )
      .action(async (file: string | undefined, opts: { ifExists: IfExists }) => {
        const fromFile = file !== undefined && file !== '-';
        const opened = fromFile ? await openExport(file) : null;
        // An import is how a store is made from the command line; it is opened, and so
        // made, only once the input's first line has shown it to be an export.
        let backend: string | undefined;
        const openStore = async () => {
          const store = await ctx.store({ create: true });
          backend = store.backendName;
          return store;
        };
        const started = Date.now();
        const input: NodeJS.ReadableStream = opened ? opened.file.createReadStream() : ctx.io.stdin;
        let read = 0;
        input.on('data', (chunk: Buffer | string) => {
          read += chunk.length;
        });
        const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
        let counts: TransferCounts = { sessions: 0, checkpoints: 0, state: 0, skipped: 0 };
        const again = ctx.commandLine(['import', fromFile ? file : '-', '--if-exists', 'skip']);
        const progress = Progress.bytes(ctx, opened?.size ?? null, 'imported');
        try {
          counts = await interruptible(
            ctx,
            (signal) =>
              importStore(openStore, untilAborted(lines, signal), {
                ifExists: opts.ifExists,
                signal,
                onProgress: (c) => {
                  counts = c;
                  progress?.update(read, c);
                },
              }),
            () =>
              stopped(
                'imported',
                counts,
                null,
                'in the store',
                `${fromFile ? '' : ' with the same export on stdin'}: ${again}`,
              ),
          );
        } catch (err) {
          if (err instanceof Interrupted) throw err;
          throw tagsNotKept(conflictForCli(err, 'the store'), backend, again);
        } finally {
          progress?.stop();
          lines.close();
          if (opened) (input as NodeJS.ReadableStream & { destroy(): void }).destroy();
        }
        ctx.output(counts, () =>
          ctx.note(summary('imported', counts, (Date.now() - started) / 1000)),
        );
      }),
    'ckpt import backup.jsonl --store postgres://app@db/agents --if-exists skip',
  );

  example(
    program
      .command('copy')
      .description(
        'copy every session and state value from one store into another (created if it is not there), streaming',
      )
      .requiredOption('--from <url>', 'the store to copy from')
      .requiredOption('--to <url>', 'the store to copy into')
      .option(
        '--if-exists <what>',
        'a session (or state value) that is already there: fail, skip (leave it) or replace',
        oneOf('if-exists', IF_EXISTS),
        'fail',
      )
      .option('--concurrency <n>', 'sessions moved at once', positiveInteger('concurrency'), 8)
      .option('--no-state', 'leave the state out')
      .option(
        '--to-plain',
        "write the target's values as plain JSON text, without the codecs (the source reads with them)",
      )
      .action(
        async (
          opts: {
            from: string;
            to: string;
            ifExists: IfExists;
            concurrency: number;
            state: boolean;
            toPlain?: boolean;
          },
          command: Command,
        ) => {
          const source = await ctx.open(opts.from);
          // The target may be new: a copy is how a deployment moves to another backend.
          const target = await ctx.open(opts.to, { create: true, plain: opts.toPlain });
          const started = Date.now();
          const total = await sessionTotal(ctx, source);
          const progress = Progress.sessions(ctx, total, 'copied');
          let counts: TransferCounts = { sessions: 0, checkpoints: 0, state: 0, skipped: 0 };
          const again = ctx.commandLine([
            'copy',
            '--from',
            opts.from,
            '--to',
            opts.to,
            '--if-exists',
            'skip',
            ...(command.getOptionValueSource('concurrency') === 'cli'
              ? ['--concurrency', String(opts.concurrency)]
              : []),
            ...(opts.state ? [] : ['--no-state']),
            ...(opts.toPlain ? ['--to-plain'] : []),
          ]);
          try {
            counts = await interruptible(
              ctx,
              (signal) =>
                copyStore(source, target, {
                  ifExists: opts.ifExists,
                  concurrency: opts.concurrency,
                  state: opts.state,
                  signal,
                  onProgress: (c) => {
                    counts = c;
                    progress?.update(c.sessions + c.skipped, c);
                  },
                }),
              () => stopped('copied', counts, total, 'in the target', `: ${again}`),
            );
          } catch (err) {
            if (err instanceof Interrupted) throw err;
            throw tagsNotKept(conflictForCli(err, 'the target store'), target.backendName, again);
          } finally {
            progress?.stop();
          }
          ctx.output(counts, () =>
            ctx.note(summary('copied', counts, (Date.now() - started) / 1000)),
          );
        },
      ),
    'ckpt copy --from sqlite:./agent.db --to postgres://app@db/agents',
    'CKPT_KEYS=k1=$(openssl rand -base64 32) ckpt copy --compress gzip --from sqlite:./agent.db --to sqlite:./sealed.db',
  );
}
