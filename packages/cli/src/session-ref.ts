/**
 * How a command names the session it works on: by its id, or, for a LangGraph thread, by
 * `--thread <thread_id>` (and `--ns <checkpoint_ns>`). The LangGraph saver of @ckpt/langgraph
 * keeps each namespace of a thread in the session `JSON.stringify([thread_id, checkpoint_ns])`
 * (its src/names.ts); the command knows that convention and needs no LangGraph package. An
 * OpenAI Agents SDK session of @ckpt/openai-agents is the ckpt session of the same id.
 */
import type { Command } from 'commander';
import { UsageError } from './usage-error.js';

/** The options that name a thread instead of a session id. */
export interface ThreadOptions {
  thread?: string;
  ns?: string;
}

/** A session as a command names it. */
export interface SessionRef {
  sessionId: string;
  /** For messages: `session "chat-1"`, or `thread "t-1"` (with its namespace, when not ''). */
  label: string;
  /** The words that name it again on a command line: the id, or --thread (and --ns). */
  words: string[];
}

/** A session named by its id. */
export function sessionById(id: string): SessionRef {
  return { sessionId: id, label: `session ${JSON.stringify(id)}`, words: [id] };
}

/** The session LangGraph's saver keeps namespace `ns` of thread `threadId` in. */
export function threadSessionId(threadId: string, ns = ''): string {
  return JSON.stringify([threadId, ns]);
}

/**
 * Declare `command`'s session argument, the positional arguments after it (`rest`, such as
 * `<seq>`), and --thread/--ns. The arguments are optional to the parser, since --thread takes
 * the session's place; `sessionAndRest` checks them.
 */
export function sessionArguments(
  command: Command,
  ...rest: [name: string, what: string][]
): Command {
  command.argument('[id]', 'the session (or name a LangGraph thread with --thread)');
  for (const [name, what] of rest) command.argument(`[${name}]`, what);
  const after = rest.map(([name]) => ` <${name}>`).join('');
  return command
    .usage(`[options] (<id> | --thread <thread_id> [--ns <checkpoint_ns>])${after}`)
    .option(
      '--thread <thread_id>',
      'a LangGraph thread instead of <id>: the session its @ckpt/langgraph saver writes',
    )
    .option('--ns <checkpoint_ns>', "the thread's checkpoint namespace (default '')");
}

/**
 * The session `positionals` (or --thread) name, and the positional arguments after it, each
 * present: `names` are those arguments' names, for the message when one is missing.
 */
export function sessionAndRest(
  positionals: (string | undefined)[],
  opts: ThreadOptions,
  names: string[] = [],
): { session: SessionRef; rest: string[] } {
  const given = positionals.filter((p): p is string => p !== undefined);
  let session: SessionRef;
  let rest: string[];
  if (opts.thread !== undefined) {
    if (given.length > names.length) {
      throw new UsageError(
        `give the session either as <id> or as --thread ${JSON.stringify(opts.thread)}, not both.`,
      );
    }
    const ns = opts.ns ?? '';
    session = {
      sessionId: threadSessionId(opts.thread, ns),
      label: `thread ${JSON.stringify(opts.thread)}${ns === '' ? '' : ` (namespace ${JSON.stringify(ns)})`}`,
      words: ['--thread', opts.thread, ...(opts.ns === undefined ? [] : ['--ns', opts.ns])],
    };
    rest = given;
  } else {
    if (opts.ns !== undefined) {
      throw new UsageError('--ns names the namespace of a thread: give --thread <thread_id> too.');
    }
    const [id, ...others] = given;
    if (id === undefined) {
      throw new UsageError('missing the session: give its <id>, or --thread <thread_id>.');
    }
    session = sessionById(id);
    rest = others;
  }
  if (rest.length < names.length) {
    throw new UsageError(`missing argument <${names[rest.length]}> after the session.`);
  }
  return { session, rest };
}
