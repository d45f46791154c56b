/** What every command works with: the streams, the options every command takes, the store. */
import { once } from 'node:events';
import {
  type CheckpointStore,
  CkptError,
  type Codec,
  isCkptError,
  type OpenStoreOptions,
  openStore,
} from '@ckpt/core';
import { redactPasswords } from '@ckpt/core/adapter';
import Table from 'cli-table3';
import type { Command } from 'commander';
import { type CodecOptions, keyFileOf, type StoreCodecs, storeCodecs } from './codecs.js';
import { type CliIo, type Colors, colorsFor, columns, cut, json, shellWord } from './io.js';
import { UsageError } from './usage-error.js';

/** The options every command takes. */
export interface GlobalOptions extends CodecOptions {
  store?: string;
  json?: boolean;
  color?: boolean;
}

/**
 * A store the command did not find, in the command's words: what was looked for and where,
 * and that only `import` and `copy --to` make a store.
 */
function storeNotThere(err: CkptError): CkptError {
  const { where, at, why, check } = err.details as Record<string, string | undefined>;
  if (where === undefined) return err;
  return new CkptError(
    'NOT_FOUND',
    `there is no ckpt store in ${where} at ${at} (${why}); check ${check}. Nothing was created: only ckpt import and ckpt copy --to create a store.`,
    { cause: err, details: err.details },
  );
}

/** `cells` on one line, each but the last padded to its column's width, two spaces apart. */
function line(cells: string[], widths: number[]): string {
  return cells
    .map((cell, i) =>
      i === cells.length - 1 ? cell : cell + ' '.repeat(widths[i]! - columns(cell)),
    )
    .join('  ')
    .trimEnd();
}

/** The options of a command that prints values: `--wide` (or `--full`) prints them whole. */
export interface WideOptions {
  wide?: boolean;
  full?: boolean;
}

/** Add `--wide` and its other name `--full` to `command`. */
export function wideOptions(command: Command): Command {
  return command
    .option('--wide', 'print values whole, not cut at the width of the terminal')
    .option('--full', 'the same as --wide');
}

/** One run of the command. */
export class Context {
  readonly io: CliIo;
  readonly #options: () => GlobalOptions;
  readonly #opened: CheckpointStore[] = [];
  /** The exit status when the command ends without an error (`doctor` sets it on a finding). */
  exitCode = 0;

  constructor(io: CliIo, options: () => GlobalOptions) {
    this.io = io;
    this.#options = options;
  }

  /** Whether output is JSON (`--json`). */
  get json(): boolean {
    return this.#options().json === true;
  }

  /** Colours for stdout. */
  get colors(): Colors {
    return colorsFor(this.io.stdout, this.io.env, this.#options().color !== false);
  }

  /** Colours for stderr. */
  get errColors(): Colors {
    return colorsFor(this.io.stderr, this.io.env, this.#options().color !== false);
  }

  /** The URL `--store` (or CKPT_STORE) gives. */
  get storeUrl(): string {
    const given = this.#options().store;
    const examples = "such as 'sqlite:./agent.db' or 'postgres://user@host/db'";
    if (given === '') throw new UsageError(`--store is empty: give it a store's URL, ${examples}.`);
    // An empty CKPT_STORE is one unset, as shells often leave it.
    const url = given ?? this.io.env.CKPT_STORE;
    if (url === undefined || url === '') {
      throw new UsageError(`no store given: pass --store <url> or set CKPT_STORE, ${examples}.`);
    }
    return url;
  }

  /**
   * The store `--store` (or CKPT_STORE) names. It must exist already, unless `create` says a
   * command may make it (only `import` does): a typo in a path or namespace is NOT_FOUND, and
   * never a new, empty store.
   */
  async store(options: { create?: boolean } = {}): Promise<CheckpointStore> {
    return this.open(this.storeUrl, options);
  }

  /** The codecs stores are opened with (see codecs.ts), read once. */
  get codecs(): Codec[] {
    return this.#storeCodecs().codecs;
  }

  /** The name of the key that seals new values, when the command was given keys. */
  get currentKey(): string | undefined {
    return this.#storeCodecs().currentKey;
  }

  /** The names of the keys the command was given, [] for none. */
  get keyNames(): string[] {
    return this.#storeCodecs().keyNames;
  }

  /** The key file the keys come from (`--key-file` or CKPT_KEY_FILE), if they come from one. */
  get keyFile(): string | undefined {
    return keyFileOf(this.io, this.#options());
  }

  #storeCodecs(): StoreCodecs {
    this.#codecs ??= storeCodecs(this.io, this.#options());
    return this.#codecs;
  }
  #codecs: StoreCodecs | undefined;

  /**
   * Open the store at `url`, which must exist already unless `create` is true, with the codecs
   * the options give (none with `plain`); every store opened is closed when the command ends.
   */
  async open(
    url: string,
    { create = false, plain = false }: { create?: boolean; plain?: boolean } = {},
  ): Promise<CheckpointStore> {
    const codecs = plain ? [] : this.codecs;
    const options: OpenStoreOptions = { create, ...(codecs.length > 0 && { codecs }) };
    const opening = this.io.open ? this.io.open(url, options) : openStore(url, options);
    const store = await opening.catch((err: unknown) => {
      throw isCkptError(err, 'NOT_FOUND') ? storeNotThere(err) : err;
    });
    this.#opened.push(store);
    return store;
  }

  /**
   * `ckpt` with `args` as a person pastes it to run again: the store repeated where it was given
   * with --store (CKPT_STORE stays set in their shell), every word quoted for the shell, and no
   * password of a URL shown.
   */
  commandLine(args: string[]): string {
    const store = this.#options().store;
    const words = ['ckpt', ...(store === undefined ? [] : ['--store', store]), ...args];
    return redactPasswords(words.map(shellWord).join(' '));
  }

  /** The columns a line may take: the terminal's width, or null (whole) in a pipe or when told. */
  width(opts: WideOptions = {}): number | null {
    if (opts.wide || opts.full || this.io.stdout.isTTY !== true) return null;
    return this.io.stdout.columns ?? 80;
  }

  /** Close every store opened. */
  async close(): Promise<void> {
    for (const store of this.#opened.splice(0)) await store.close().catch(() => {});
  }

  /** Write a line (or more) to stdout. */
  print(text = ''): void {
    this.io.stdout.write(text.endsWith('\n') ? text : `${text}\n`);
  }

  /** Write a note to stderr: what a person should know, never data. */
  note(text: string): void {
    this.io.stderr.write(`${text}\n`);
  }

  /** Print `value` as JSON (with `--json`), or else what `human` prints. */
  output(value: unknown, human: () => void): void {
    if (this.json) this.print(json(value));
    else human();
  }

  /** Write `text` to stdout, waiting while its buffer is full, so that memory holds little. */
  async #write(text: string): Promise<void> {
    const out = this.io.stdout;
    if (out.write(text) === false) await once(out as NodeJS.WritableStream, 'drain');
  }

  /**
   * Print the items of `pages` as they come, as `output` prints a page whose cursor is null:
   * with `--json` the same JSON (`{ "items": [...], "cursor": null }`), else rows under `head`.
   * A table's columns are as wide as the first page needs, and widen for a later page that
   * needs more.
   */
  async outputPages<T>(
    pages: AsyncIterable<T[]>,
    head: string[],
    row: (item: T) => (string | number)[],
  ): Promise<void> {
    if (this.json) {
      let first = true;
      for await (const page of pages) {
        for (const item of page) {
          const text = JSON.stringify(item, null, 2).replaceAll('\n', '\n    ');
          await this.#write(`${first ? '{\n  "items": [\n' : ',\n'}    ${text}`);
          first = false;
        }
      }
      await this.#write(
        first ? json({ items: [], cursor: null }) : '\n  ],\n  "cursor": null\n}\n',
      );
      return;
    }
    const widths = head.map(columns);
    // The header goes out with the first page, as wide as that page needs.
    let lines = [head.map((h) => this.colors.bold(h))];
    for await (const page of pages) {
      lines.push(...page.map((item) => row(item).map(String)));
      for (const cells of lines) {
        cells.forEach((cell, i) => {
          widths[i] = Math.max(widths[i]!, columns(cell));
        });
      }
      await this.#write(lines.map((cells) => `${line(cells, widths)}\n`).join(''));
      lines = [];
    }
  }

  /**
   * Print rows as columns under a header: for a person, no borders, aligned. With `width`, the
   * last column is cut so that each line fits in it.
   */
  table(head: string[], rows: (string | number)[][], width: number | null = null): void {
    const c = this.colors;
    if (width !== null && head.length > 1) {
      const text = rows.map((row) => row.map(String));
      const before = head
        .slice(0, -1)
        .map((h, i) => Math.max(columns(h), ...text.map((row) => columns(row[i] ?? ''))));
      // Two spaces between columns.
      const room = Math.max(width - before.reduce((sum, w) => sum + w + 2, 0), 10);
      rows = text.map((row) => [...row.slice(0, -1), cut(row.at(-1) ?? '', room)]);
    }
    const table = new Table({
      head: head.map((h) => c.bold(h)),
      chars: {
        top: '',
        'top-mid': '',
        'top-left': '',
        'top-right': '',
        bottom: '',
        'bottom-mid': '',
        'bottom-left': '',
        'bottom-right': '',
        left: '',
        'left-mid': '',
        mid: '',
        'mid-mid': '',
        right: '',
        'right-mid': '',
        middle: '  ',
      },
      style: { head: [], border: [], 'padding-left': 0, 'padding-right': 0 },
    });
    table.push(...rows.map((row) => row.map(String)));
    this.print(
      table
        .toString()
        .split('\n')
        .map((line) => line.trimEnd())
        .join('\n'),
    );
  }
}
