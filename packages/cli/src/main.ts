/**
 * The `ckpt` command: inspect, repair, back up and move ckpt stores. `main` runs it on the
 * given arguments and surroundings and returns the exit status; a failure is one line on
 * stderr with its code and what to do.
 */
import { isCkptError } from '@ckpt/core';
import { Command, CommanderError, Option } from 'commander';
import { COMPRESSIONS, missingKeyMessage } from './codecs.js';
import { registerDestroy } from './commands/destroy.js';
import { registerDiff } from './commands/diff.js';
import { registerDoctor } from './commands/doctor.js';
import { registerInspect } from './commands/inspect.js';
import { registerRekey } from './commands/rekey.js';
import { NotConfirmed, registerRepair } from './commands/repair.js';
import { registerRetention } from './commands/retention.js';
import { registerState } from './commands/state.js';
import { registerStudio } from './commands/studio.js';
import { registerTag } from './commands/tag.js';
import { registerTransfer } from './commands/transfer.js';
import { registerWatch } from './commands/watch.js';
import { Context, type GlobalOptions } from './context.js';
import { EXIT, exitCodeOf } from './exit-codes.js';
import { Interrupted } from './interrupt.js';
import type { CliIo } from './io.js';
import { oneOf } from './parse.js';
import { UsageError } from './usage-error.js';
import { VERSION } from './version.js';

/**
 * Commander's `text` for a usage error, with a sentence saying where an option that other
 * tools take goes in ckpt: the namespace is part of the store's URL, and keys are never an
 * argument.
 */
function withHint(text: string): string {
  if (/^error: unknown option '--namespace\b/.test(text)) {
    return `${text}(the namespace is part of the store's URL: add ?namespace=<name>, as in --store 'sqlite:./agent.db?namespace=agents')\n`;
  }
  if (/^error: unknown option '--keys?(=…)?'/.test(text)) {
    return `${text}(keys come from CKPT_KEYS or from a file named by --key-file <path>, never from an argument, which any user of the machine can read in the list of processes)\n`;
  }
  return text;
}

/**
 * Commander's error `text` (`error: unknown option '--x'`, with lines such as a suggestion) as
 * the one line every usage error is: `ckpt: error: …`, ending with where to find the usage.
 */
function usageLine(ctx: Context, text: string, helpHint: string): string {
  // The value of an unknown `--option=value` is not shown: it may be a key or a password.
  const unshown = text.replace(/^(error: unknown option '--[^=']+)=[^']*'/, "$1=…'");
  const said = withHint(unshown)
    .replace(/^error:\s*/, '')
    .replace(/\s*\n\s*/g, ' ')
    .trim();
  return `${ctx.errColors.red('ckpt: error:')} ${said} ${helpHint}\n`;
}

/**
 * Commander's output for `command`: help to stdout, and an error as one usage line on stderr
 * (in place of its own error and the hint it would print on a second line).
 */
function outputFor(ctx: Context, helpHint: string) {
  return {
    writeOut: (text: string) => ctx.io.stdout.write(text),
    writeErr: (text: string) => ctx.io.stderr.write(text),
    outputError: (text: string, write: (text: string) => void) =>
      write(usageLine(ctx, text, helpHint)),
  };
}

/**
 * The message of `err`, in the command's words when it is about a value sealed under a key the
 * command was not given (`keyNames` are the names of those it was): where it takes keys.
 */
function messageOf(err: unknown, keyNames: () => string[]): string {
  return (
    missingKeyMessage(err, keyNames, 'give its key with CKPT_KEYS or --key-file.') ??
    (err instanceof Error ? err.message : String(err))
  );
}

/** The program, with every command registered on `ctx`. */
function program(ctx: Context): Command {
  const root = new Command('ckpt')
    .description(
      'Inspect, repair, back up and move ckpt stores (SQLite, PostgreSQL, PGlite, MySQL, Redis).',
    )
    .version(VERSION, '-v, --version')
    .addOption(
      new Option(
        '-s, --store <url>',
        "the store, as openStore takes it: 'sqlite:./agent.db', 'postgres://…', 'pglite:./dir', 'mysql://…', 'redis://…' (default: $CKPT_STORE)",
      ),
    )
    .addOption(
      new Option(
        '--compress <kind>',
        'compress the values written: gzip, deflate, brotli, zstd or none (default: $CKPT_COMPRESS, else none); compressed values read without it',
      ).argParser(oneOf('compress', COMPRESSIONS)),
    )
    .option(
      '--key-file <path>',
      'encrypt with the keys in this file, name=<base64> a line, the first sealing new values (default: $CKPT_KEY_FILE; or the keys in $CKPT_KEYS)',
    )
    .option(
      '--current-key <name>',
      'the key that seals new values (default: $CKPT_KEY_CURRENT, else the first key given)',
    )
    .option('--json', 'print JSON for scripts instead of tables')
    .option(
      '--no-color',
      'no colour (also off when NO_COLOR is set or the output is not a terminal)',
    )
    .configureHelp({ showGlobalOptions: true, sortSubcommands: false })
    .exitOverride()
    .configureOutput(
      outputFor(ctx, '(run ckpt --help for the commands, ckpt <command> --help for one of them)'),
    )
    .addHelpText(
      'after',
      `
Exit status: 0 done, 1 unexpected failure, 2 usage error or not confirmed, 3 not found (a
session, checkpoint or state key, or the store itself), 4 conflict, 5 bad input, 6 store
unusable (unreachable, refused, schema), 7 doctor found a problem, 130 stopped by Ctrl-C.

Only import, and copy's --to, create a store that is not there; every other command opens
only an existing one, so a misspelt path or namespace exits 3 and creates nothing.

A LangGraph thread's session: --thread <thread_id> [--ns <checkpoint_ns>] in place of <id>.
An OpenAI Agents SDK session's id is its ckpt session id.

Example:
  $ export CKPT_STORE=sqlite:./agent.db
  $ ckpt sessions
  $ ckpt tree chat-1
  $ ckpt copy --from sqlite:./agent.db --to postgres://app@db:5432/agents
`,
    );
  registerInspect(root, ctx);
  registerWatch(root, ctx);
  registerDiff(root, ctx);
  registerRepair(root, ctx);
  registerTag(root, ctx);
  registerRetention(root, ctx);
  registerDestroy(root, ctx);
  registerState(root, ctx);
  registerTransfer(root, ctx);
  registerRekey(root, ctx);
  registerDoctor(root, ctx);
  registerStudio(root, ctx);
  // Every command inherits the output settings, so that a usage error is reported the same.
  for (const command of root.commands) {
    command
      .exitOverride()
      .configureOutput(outputFor(ctx, `(run ckpt ${command.name()} --help for its usage)`));
  }
  return root;
}

/** Run `ckpt` with `argv` (the arguments after the command's name); returns the exit status. */
export async function main(argv: string[], io: CliIo): Promise<number> {
  let root: Command | undefined;
  const ctx = new Context(io, () => (root?.opts() ?? {}) as GlobalOptions);
  root = program(ctx);
  try {
    await root.parseAsync(argv, { from: 'user' });
    return ctx.exitCode;
  } catch (err) {
    if (err instanceof CommanderError) {
      return err.code === 'commander.helpDisplayed' ||
        err.code === 'commander.version' ||
        err.exitCode === 0
        ? EXIT.OK
        : EXIT.USAGE;
    }
    const c = ctx.errColors;
    const message = messageOf(err, () => ctx.keyNames).replace(/\s*\n\s*/g, ' ');
    if (err instanceof NotConfirmed) {
      io.stderr.write(`ckpt: ${message}\n`);
      return EXIT.USAGE;
    }
    if (err instanceof Interrupted) {
      io.stderr.write(`${c.yellow('ckpt: interrupted:')} ${message}\n`);
      return EXIT.INTERRUPTED;
    }
    if (err instanceof UsageError) {
      io.stderr.write(`${c.red('ckpt: error:')} ${message}\n`);
      return EXIT.USAGE;
    }
    const code = isCkptError(err) ? `${err.code}: ` : '';
    io.stderr.write(`${c.red('ckpt: error')} ${code}${message}\n`);
    return exitCodeOf(err);
  } finally {
    await ctx.close();
  }
}
