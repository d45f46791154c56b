/**
 * `ckpt rekey`: every stored value rewritten under the codecs the command is given (the current
 * key, the compression), beside live writers, so that an old key can be dropped afterwards; then
 * what stays of the values it replaced, where the backend keeps copies (free pages, dead row
 * versions), and, for a SQLite file, writing the file anew (VACUUM) so that none stays.
 */
import type { Codec, Leftovers, ReencodeProgress } from '@ckpt/core';
import type { Command } from 'commander';
import { confirm } from '../confirm.js';
import type { Context } from '../context.js';
import { interruptible } from '../interrupt.js';
import { count } from '../io.js';
import { Progress, sessionTotal } from '../progress.js';
import { UsageError } from '../usage-error.js';
import { example } from './help.js';

/**
 * `gzip + aes-256-gcm with key k2 (gzip leaves values shorter than its minBytes uncompressed)`:
 * the codecs every value is now under, and that a compression left the small values as they
 * were, which `ckpt doctor` then reports under the encryption alone.
 */
function underCodecs(codecs: readonly Codec[], key: string | undefined): string {
  const names = codecs.map((c) => c.name).join(' + ');
  const compressing = codecs.find((c) => c.name !== 'aes-256-gcm');
  return `${names}${key === undefined ? '' : ` with key ${key}`}${compressing === undefined ? '' : ` (${compressing.name} leaves values shorter than its minBytes uncompressed)`}`;
}

export function registerRekey(program: Command, ctx: Context): void {
  example(
    program
      .command('rekey')
      .description(
        'rewrite every stored value under the current key and compression, beside live writers; seqs, ids and times stay (keys from $CKPT_KEYS or --key-file)',
      )
      .option(
        '--vacuum',
        'then write a SQLite file anew (VACUUM) without asking, so that no replaced value stays in its free space',
      )
      .action(async (opts: { vacuum?: boolean }) => {
        const codecs = ctx.codecs;
        if (codecs.length === 0) {
          throw new UsageError(
            'rekey needs codecs to write under: set CKPT_KEYS (or give --key-file) with the new key first, and/or --compress; to store plain values again, use ckpt copy --to-plain.',
          );
        }
        const store = await ctx.store();
        const leftovers = store.backend.leftovers?.();
        if (opts.vacuum && leftovers?.reclaim === undefined) {
          const why = `--vacuum writes a SQLite file anew; the ${store.backendName} backend has no such step.`;
          throw new UsageError([why, leftovers?.remain, 'Nothing was rewritten.'].join(' '));
        }
        const started = Date.now();
        const total = await sessionTotal(ctx, store);
        let progress = Progress.sessions(ctx, total, 'rekeyed');
        let done: ReencodeProgress = { pass: 1, sessions: 0, checkpoints: 0, state: 0 };
        const result = await interruptible(
          ctx,
          (signal) =>
            store.reencode({
              signal,
              onProgress: (p) => {
                // A later pass walks every session again for what was written meanwhile under
                // other codecs: a bar of its own, since its sessions count from 0 again.
                if (p.pass !== done.pass) {
                  progress?.stop();
                  progress = Progress.sessions(ctx, total, `pass ${p.pass}: checked`);
                }
                done = p;
                // Sessions created during the rewrite can take a pass beyond the total.
                progress?.update(Math.min(p.sessions, total ?? p.sessions), {
                  sessions: p.sessions,
                  checkpoints: p.checkpoints,
                  state: p.state,
                  skipped: 0,
                });
              },
            }),
          () =>
            `stopped after rewriting ${count(done.checkpoints, 'checkpoint')} and ${count(done.state, 'state value')}; every value is whole, under the old codecs or the new. Run ${ctx.commandLine(['rekey'])} again to finish.`,
        ).finally(() => progress?.stop());
        const seconds = (Date.now() - started) / 1000;
        ctx.output(result, () =>
          ctx.note(
            `rekeyed ${count(result.checkpoints, 'checkpoint')} and ${count(result.state, 'state value')} in ${seconds.toFixed(1)} s; every value is now under ${underCodecs(codecs, ctx.currentKey)}.`,
          ),
        );
        if (leftovers !== undefined) await afterRewrite(ctx, leftovers, opts.vacuum === true);
      }),
    'ckpt rekey --store sqlite:./agent.db --key-file ./keys --compress gzip',
    'CKPT_KEYS="k2=$(cat k2.b64),k1=$(cat k1.b64)" ckpt rekey --store postgres://app@db/agents',
    'ckpt rekey --store sqlite:./agent.db --vacuum',
  );
}

/**
 * What stays of the values the rewrite replaced, and, where the backend can reclaim it: done
 * with `--vacuum`, asked for at a terminal, and said how to do elsewhere.
 */
async function afterRewrite(ctx: Context, leftovers: Leftovers, vacuum: boolean): Promise<void> {
  const { reclaim } = leftovers;
  if (reclaim === undefined) {
    ctx.note(leftovers.remain);
    return;
  }
  const later = ctx.commandLine(['rekey', '--vacuum']);
  if (!vacuum) {
    if (ctx.io.stdin.isTTY !== true) {
      ctx.note(`${leftovers.remain} To write it anew, run ${later}.`);
      return;
    }
    const sure = await confirm(
      ctx.io,
      `${leftovers.remain} Write the file anew now (VACUUM; writers wait until it ends)?`,
    );
    if (!sure) {
      ctx.note(`left as it is; to write it anew later, run ${later}.`);
      return;
    }
  }
  ctx.note(await reclaim());
}
