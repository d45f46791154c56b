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
}

/** The surroundings of the process. */
export function processIo(): CliIo {
  return { stdout: process.stdout, stderr: process.stderr, stdin: process.stdin, env: process.env };
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

/** A JSON value on one line, cut to `max` characters. */
export function brief(value: unknown, max = 60): string {
  const text = typeof value === 'string' ? value : JSON.stringify(value);
  return text.length > max ? `${text.slice(0, max - 1)}…` : text;
}

/** A JSON document for `--json`: dates as ISO text. */
export function json(value: unknown): string {
  return `${JSON.stringify(value, null, 2)}\n`;
}
