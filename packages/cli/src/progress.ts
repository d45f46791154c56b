/**
 * A progress bar on stderr for long work (export, import, copy, sweep, rekey): how far, rate and
 * time left, drawn only when stderr is a terminal, so that a pipe or a log file never gets one.
 */
import { allSessionIds, type CheckpointStore, type TransferCounts } from '@ckpt/core';
import cliProgress from 'cli-progress';
import type { Context } from './context.js';
import { count } from './io.js';

/** How many sessions `store` holds, counted only where a progress bar will show it. */
export async function sessionTotal(ctx: Context, store: CheckpointStore): Promise<number | null> {
  if (ctx.io.stderr.isTTY !== true) return null;
  let n = 0;
  for await (const _ of allSessionIds(store)) n++;
  return n;
}

/** A size in bytes for a person: `812 B`, `4.2 MB`. */
function size(bytes: number): string {
  const units = ['B', 'kB', 'MB', 'GB', 'TB'];
  let n = bytes;
  let unit = 0;
  while (n >= 1000 && unit < units.length - 1) {
    n /= 1000;
    unit++;
  }
  return unit === 0 ? `${n} B` : `${n.toFixed(1)} ${units[unit]}`;
}

/** A bar over sessions (`copied 12 of 40 sessions`) or over the bytes of an export being read. */
export class Progress {
  readonly #bar: cliProgress.SingleBar;
  readonly #started = Date.now();
  readonly #bytes: boolean;

  private constructor(bar: cliProgress.SingleBar, bytes: boolean) {
    this.#bar = bar;
    this.#bytes = bytes;
  }

  /** A bar over `total` sessions, `verb` (copied, exported) saying what happens to them. */
  static sessions(ctx: Context, total: number | null, verb: string): Progress | null {
    const noun = total === 1 ? 'session' : 'sessions';
    return Progress.#start(ctx, total, `${verb} {value} of {total} ${noun}`, false);
  }

  /** A bar over the `total` bytes of an export being read, `verb` saying what was done. */
  static bytes(ctx: Context, total: number | null, verb: string): Progress | null {
    const of = total === null ? '' : size(total);
    return Progress.#start(ctx, total, `${verb} {sessions} | read {read} of ${of}`, true);
  }

  static #start(ctx: Context, total: number | null, what: string, bytes: boolean) {
    const stderr = ctx.io.stderr;
    if (stderr.isTTY !== true || total === null) return null;
    const c = ctx.errColors;
    const bar = new cliProgress.SingleBar(
      {
        stream: stderr as NodeJS.WritableStream,
        format: `${c.cyan('{bar}')} {percentage}% | ${what} | {rate} sessions/s | {checkpoints} | ETA {eta_formatted}`,
        hideCursor: true,
        etaBuffer: 50,
        fps: 10,
      },
      cliProgress.Presets.shades_classic,
    );
    bar.start(total, 0, {
      sessions: count(0, 'session'),
      checkpoints: count(0, 'checkpoint'),
      read: size(0),
      rate: '0',
    });
    return new Progress(bar, bytes);
  }

  /** Show `counts`, and `done` steps of the total (sessions, or bytes read). */
  update(done: number, counts: TransferCounts): void {
    const seconds = Math.max((Date.now() - this.#started) / 1000, 0.001);
    const sessions = counts.sessions + counts.skipped;
    this.#bar.update(done, {
      sessions: count(sessions, 'session'),
      checkpoints: count(counts.checkpoints, 'checkpoint'),
      read: this.#bytes ? size(done) : '',
      rate: Math.round(sessions / seconds).toLocaleString('en-US'),
    });
  }

  stop(): void {
    this.#bar.stop();
  }
}
