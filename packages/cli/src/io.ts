/**
 * Where the command reads and writes, and how it shows things there: tables and colour for a
 * person at a terminal, plain lines in a pipe, JSON with `--json`. Colour only on a terminal,
 * and never with NO_COLOR set.
 */
import type { CheckpointStore, OpenStoreOptions } from '@ckpt/core';
import pc from 'picocolors';

/** A stream the command writes to. */
export interface Output {
  write(text: string): unknown;
  isTTY?: boolean;
  columns?: number;
}

/** The command's surroundings; `main` takes them so that tests can run it in-process. */
export interface CliIo {
  stdout: Output;
  stderr: Output;
  stdin: NodeJS.ReadableStream & { isTTY?: boolean };
  env: Record<string, string | undefined>;
  /** Open the store a URL names, with `options` (default: `openStore` of @ckpt/core). */
  open?(url: string, options: OpenStoreOptions): Promise<CheckpointStore>;
  /**
   * Call `listener` on Ctrl-C (SIGINT) until the returned function is called; a copy or import
   * listens so that it stops cleanly. Without it, Ctrl-C does what it does by default.
   */
  onInterrupt?(listener: () => void): () => void;
}

/** The surroundings of the process. */
export function processIo(): CliIo {
  return {
    stdout: process.stdout,
    stderr: process.stderr,
    stdin: process.stdin,
    env: process.env,
    onInterrupt(listener) {
      process.on('SIGINT', listener);
      return () => process.off('SIGINT', listener);
    },
  };
}

/** Colours for `stream`, or plain text where it is no terminal or NO_COLOR is set. */
export function colorsFor(stream: Output, env: CliIo['env'], allowed = true) {
  const on = allowed && stream.isTTY === true && !('NO_COLOR' in env) && env.TERM !== 'dumb';
  return pc.createColors(on);
}

/** Colours as `colorsFor` gives them. */
export type Colors = ReturnType<typeof colorsFor>;

/** A time as `2026-12-05 10:00:01Z` (UTC, to the second), for tables. */
export function shortTime(date: Date): string {
  return `${date.toISOString().slice(0, 19).replace('T', ' ')}Z`;
}

/** A JSON value on one line (a string as it is), cut to `max` columns (null: whole). */
export function brief(value: unknown, max: number | null): string {
  return cut(typeof value === 'string' ? value : JSON.stringify(value), max);
}

// Characters a terminal draws two columns wide: East Asian wide and fullwidth forms, emoji.
const WIDE =
  /[\u1100-\u115f\u2e80-\u303e\u3041-\u33ff\u3400-\u4dbf\u4e00-\u9fff\ua000-\ua4cf\uac00-\ud7a3\uf900-\ufaff\ufe30-\ufe4f\uff00-\uff60\uffe0-\uffe6\u{1f300}-\u{1f64f}\u{1f900}-\u{1f9ff}\u{20000}-\u{3fffd}]/u;
// biome-ignore lint/suspicious/noControlCharactersInRegex: the escape that starts a colour
const COLOUR = /\u001b\[[0-9;]*m/g;

/** The columns `text` takes on a terminal (colours take none). */
export function columns(text: string): number {
  let n = 0;
  for (const ch of text.replace(COLOUR, '')) n += WIDE.test(ch) ? 2 : 1;
  return n;
}

/** `text` cut to `max` columns, ending in `…` where it was cut (null: whole); colours kept. */
export function cut(text: string, max: number | null): string {
  if (max === null || columns(text) <= max) return text;
  let out = '';
  let used = 0;
  let coloured = false;
  // Colour escapes pass through at no width; characters count as they are drawn.
  // biome-ignore lint/suspicious/noControlCharactersInRegex: the escape that starts a colour
  for (const [, colour, ch] of text.matchAll(/(\u001b\[[0-9;]*m)|([\s\S])/gu)) {
    if (colour !== undefined) {
      out += colour;
      coloured = true;
      continue;
    }
    const w = WIDE.test(ch!) ? 2 : 1;
    if (used + w > max - 1) break;
    out += ch;
    used += w;
  }
  return `${out}…${coloured ? '\u001b[0m' : ''}`;
}

/**
 * `n` and the noun, plural unless `n` is 1: `1 checkpoint`, `2 checkpoints`, `0 state values`,
 * `98,310 checkpoints` (thousands grouped, as the progress bars show them).
 */
export function count(n: number, noun: string): string {
  return `${n.toLocaleString('en-US')} ${n === 1 ? noun : `${noun}s`}`;
}

/** `word` as a shell reads it back: bare when safe, else in single quotes. */
export function shellWord(word: string): string {
  return /^[\w@%+=:,./-]+$/.test(word) ? word : `'${word.replaceAll("'", `'\\''`)}'`;
}

/** A JSON document for `--json`: dates as ISO text. */
export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
