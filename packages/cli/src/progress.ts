/**
 * A progress bar on stderr for long work (export, import, copy): counts, rate and time left,
 * drawn only when stderr is a terminal, so that a pipe or a log file never gets one.
 */
import type { TransferCounts } from '@ckpt/core';
import cliProgress from 'cli-progress';
import type { Context } from './context.js';

/** A bar over `total` steps (sessions, or bytes of an export being read). */
export class Progress {
  readonly #bar: cliProgress.SingleBar;
  readonly #started = Date.now();

  private constructor(bar: cliProgress.SingleBar) {
    this.#bar = bar;
  }

  /** A bar for `ctx`, or null where stderr is no terminal (or the total is unknown). */
  static start(ctx: Context, total: number | null): Progress | null {
    const stderr = ctx.io.stderr;
    if (stderr.isTTY !== true || total === null) return null;
    const c = ctx.errColors;
    const bar = new cliProgress.SingleBar(
      {
        stream: stderr as NodeJS.WritableStream,
        format: `${c.cyan('{bar}')} {percentage}% | {sessions} sessions | {rate} sessions/s | {checkpoints} checkpoints | ETA {eta_formatted}`,
        hideCursor: true,
        etaBuffer: 50,
        fps: 10,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, { sessions: 0, checkpoints: 0, rate: '0' });
    return new Progress(bar);
  }

  /** Show `counts` (and `done` steps of the total). */
  update(done: number, counts: TransferCounts): void {
    const seconds = Math.max((Date.now() - this.#started) / 1000, 0.001);
    const sessions = counts.sessions + counts.skipped;
    this.#bar.update(done, {
      sessions,
      checkpoints: counts.checkpoints,
      rate: Math.round(sessions / seconds).toLocaleString('en-US'),
    });
  }

  stop(): void {
    this.#bar.stop();
  }
}
