/** Moving data: export (to a file or stdout), import (from a file or stdin), copy (store to store). */

import { once } from 'node:events';
import { createReadStream, createWriteStream, statSync } from 'node:fs';
import { createInterface } from 'node:readline';
import { finished } from 'node:stream/promises';
import {
  allSessionIds,
  type CheckpointStore,
  copyStore,
  exportStore,
  importStore,
  type TransferCounts,
} from '@ckpt/core';
import type { Command } from 'commander';
import type { Context } from '../context.js';
import { oneOf, positiveInteger } from '../parse.js';
import { Progress } from '../progress.js';
import { example } from './help.js';

const IF_EXISTS = ['fail', 'skip', 'replace'] as const;

/** How many sessions `store` holds, counted only where a progress bar will show it. */
async function sessionTotal(ctx: Context, store: CheckpointStore): Promise<number | null> {
  if (ctx.io.stderr.isTTY !== true) return null;
  let n = 0;
  for await (const _ of allSessionIds(store)) n++;
  return n;
}

function summary(verb: string, counts: TransferCounts, seconds: number): string {
  const skipped = counts.skipped > 0 ? ` (${counts.skipped} already there, skipped)` : '';
  return `${verb} ${counts.sessions} sessions, ${counts.checkpoints} checkpoints and ${counts.state} state values in ${seconds.toFixed(1)} s${skipped}`;
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
      .action(async (opts: { out?: string; session?: string[] }) => {
        const store = await ctx.store();
        const started = Date.now();
        const total = opts.session ? opts.session.length : await sessionTotal(ctx, store);
        const progress = Progress.start(ctx, total);
        const out =
          opts.out === undefined ? ctx.io.stdout : createWriteStream(opts.out, { mode: 0o600 });
        let counts: TransferCounts = { sessions: 0, checkpoints: 0, state: 0, skipped: 0 };
        try {
          for await (const line of exportStore(store, {
            sessionIds: opts.session,
            onProgress: (c) => {
              counts = c;
              progress?.update(c.sessions, c);
            },
          })) {
            // Wait for a full buffer to drain, so that memory holds a few lines, not the store.
            if (out.write(line) === false) await once(out as NodeJS.WritableStream, 'drain');
          }
        } finally {
          progress?.stop();
          if (out !== ctx.io.stdout) {
            const file = out as NodeJS.WritableStream & { end(): void };
            file.end();
            await finished(file);
          }
        }
        const done = summary('exported', counts, (Date.now() - started) / 1000);
        if (ctx.json && opts.out !== undefined) ctx.print(JSON.stringify(counts));
        else ctx.note(done);
      }),
    'ckpt export --store sqlite:./agent.db --out backup.jsonl',
    'ckpt export --session chat-1 chat-2 > two.jsonl',
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
        'a session that is already there: fail, skip or replace',
        oneOf('if-exists', IF_EXISTS),
        'fail',
      )
      .action(async (file: string | undefined, opts: { ifExists: (typeof IF_EXISTS)[number] }) => {
        // An import is how a store is made from the command line.
        const store = await ctx.store({ create: true });
        const started = Date.now();
        const fromFile = file !== undefined && file !== '-';
        const input: NodeJS.ReadableStream = fromFile ? createReadStream(file) : ctx.io.stdin;
        const progress = Progress.start(ctx, fromFile ? statSync(file).size : null);
        let read = 0;
        input.on('data', (chunk: Buffer | string) => {
          read += chunk.length;
        });
        const lines = createInterface({ input, crlfDelay: Number.POSITIVE_INFINITY });
        let counts: TransferCounts;
        try {
          counts = await importStore(store, lines, {
            ifExists: opts.ifExists,
            onProgress: (c) => progress?.update(read, c),
          });
        } finally {
          progress?.stop();
          lines.close();
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
        'a session that is already there: fail, skip or replace',
        oneOf('if-exists', IF_EXISTS),
        'fail',
      )
      .option('--concurrency <n>', 'sessions moved at once', positiveInteger('concurrency'), 8)
      .option('--no-state', 'leave the state out')
      .action(
        async (opts: {
          from: string;
          to: string;
          ifExists: (typeof IF_EXISTS)[number];
          concurrency: number;
          state: boolean;
        }) => {
          const source = await ctx.open(opts.from);
          // The target may be new: a copy is how a deployment moves to another backend.
          const target = await ctx.open(opts.to, { create: true });
          const started = Date.now();
          const progress = Progress.start(ctx, await sessionTotal(ctx, source));
          let counts: TransferCounts;
          try {
            counts = await copyStore(source, target, {
              ifExists: opts.ifExists,
              concurrency: opts.concurrency,
              state: opts.state,
              onProgress: (c) => progress?.update(c.sessions + c.skipped, c),
            });
          } finally {
            progress?.stop();
          }
          ctx.output(counts, () =>
            ctx.note(summary('copied', counts, (Date.now() - started) / 1000)),
          );
        },
      ),
    'ckpt copy --from sqlite:./agent.db --to postgres://app@db/agents',
  );
}
