/**
 * Where a LangGraph thread lives in a ckpt store: one session per (thread_id, checkpoint_ns),
 * and the keys of the saver's state scope beside them.
 */
import { CkptError } from '@ckpt/core';
import type { RunnableConfig } from '@langchain/core/runnables';

/** The thread and namespace a config names. */
export interface Target {
  threadId: string;
  namespace: string;
}

/** The longest session id or state key ckpt takes, in code points. */
const MAX_NAME = 255;
/** What a session id holds besides its thread id and namespace: `["`, `","` and `"]`. */
const FRAME = 7;
/** The length of LangGraph's checkpoint ids (uuid6). */
const CHECKPOINT_ID = 36;

/**
 * The longest a thread id and its namespace may be together, each counted as it stands in the
 * session id (a quote, a backslash or a control character takes its JSON escape): short
 * enough that the longest key the saver makes of it, a checkpoint's writes
 * (`w:<session>:<checkpoint id>`), fits ckpt's limit too.
 */
export const MAX_THREAD_AND_NAMESPACE = MAX_NAME - 'w::'.length - CHECKPOINT_ID - FRAME;

function codePoints(text: string): number {
  let n = 0;
  for (const _ of text) n++;
  return n;
}

/** How many code points `value` takes inside a session id: its JSON string, unquoted. */
function lengthInSession(value: string): number {
  return codePoints(JSON.stringify(value)) - 2;
}

/** Which arguments named the thread and its namespace, for an error about them. */
export interface Arguments {
  thread: string;
  namespace: string;
}

/** The names of the thread and namespace of a LangGraph config. */
export const CONFIG_ARGUMENTS: Arguments = {
  thread: 'config.configurable.thread_id',
  namespace: 'config.configurable.checkpoint_ns',
};

/** The names of a thread given to deleteThread or prune, with one of its namespaces. */
export const THREAD_ARGUMENTS: Arguments = {
  thread: 'threadId',
  namespace: 'a namespace of the thread',
};

/**
 * The session of one namespace of a thread: a JSON array, so that no thread id or namespace
 * can be mistaken for another pair, whatever characters they hold. A pair too long for a
 * session id is refused in the terms of the arguments that named it.
 */
export function sessionOf(
  threadId: string,
  namespace: string,
  names: Arguments = CONFIG_ARGUMENTS,
): string {
  const sessionId = JSON.stringify([threadId, namespace]);
  const max = MAX_THREAD_AND_NAMESPACE + FRAME;
  // UTF-16 length is at least the code point count: most ids need no count.
  if (sessionId.length > max && codePoints(sessionId) > max) {
    throw tooLong(threadId, namespace, names);
  }
  return sessionId;
}

/**
 * The thread and namespace of a session the saver names (see sessionOf), or undefined for any
 * other session of the store.
 */
export function targetOfSession(sessionId: string): Target | undefined {
  let parsed: unknown;
  try {
    parsed = JSON.parse(sessionId);
  } catch {
    return undefined;
  }
  if (!Array.isArray(parsed) || parsed.length !== 2) return undefined;
  const [threadId, namespace] = parsed;
  if (typeof threadId !== 'string' || typeof namespace !== 'string') return undefined;
  // Only the text sessionOf makes of the pair: JSON with other spacing names another session.
  return JSON.stringify(parsed) === sessionId ? { threadId, namespace } : undefined;
}

function tooLong(threadId: string, namespace: string, names: Arguments): CkptError {
  const thread = lengthInSession(threadId);
  const ns = lengthInSession(namespace);
  const plain = codePoints(threadId);
  const max = Math.max(0, MAX_THREAD_AND_NAMESPACE - ns);
  const escaped =
    thread === plain
      ? ''
      : ` (${thread} as stored: quotes, backslashes and control characters count as their JSON escapes)`;
  const withNamespace = namespace === '' ? '' : ` with ${names.namespace} of ${ns} characters`;
  return new CkptError(
    'INVALID_ARGUMENT',
    `${names.thread} is ${plain} characters long${escaped}; it can be at most ${max}${withNamespace}. A thread id and its namespace name one ckpt session together and take at most ${MAX_THREAD_AND_NAMESPACE} characters; use a shorter thread id, such as a hash of this one.`,
    { details: { argument: names.thread, length: thread, max } },
  );
}

/** State keys of the saver's scope. */
export const stateKeys = {
  /** The namespaces a thread has checkpoints in (a JSON array of strings). */
  thread: (threadId: string) => `t:${threadId}`,
  threadPrefix: 't:',
  /** Every thread, kept only where the backend cannot list state keys (a JSON array of ids). */
  threads: 'threads',
  /** The pending writes of one checkpoint. */
  writes: (sessionId: string, checkpointId: string) => `w:${sessionId}:${checkpointId}`,
  /** The ids of the newest checkpoints deleteThread removed from a session (a JSON array). */
  deleted: (sessionId: string) => `d:${sessionId}`,
  /**
   * Values of pruned checkpoints that kept ones read, whole (seq -> channel -> entry), as the
   * saver kept them before layout 2 (see channel-values.ts); read, never written.
   */
  carried: (sessionId: string) => `c:${sessionId}`,
};

function text(value: unknown): string | undefined {
  if (value === undefined || value === null || value === '') return undefined;
  if (typeof value === 'string') return value;
  if (typeof value === 'number' && Number.isFinite(value)) return String(value);
  return undefined;
}

/** The thread of `config`, or undefined when it names none. */
export function threadOf(config: RunnableConfig): string | undefined {
  return text(config.configurable?.thread_id);
}

/** The namespace of `config`: '' when it names none. */
export function namespaceOf(config: RunnableConfig): string {
  const ns = config.configurable?.checkpoint_ns;
  return typeof ns === 'string' ? ns : '';
}

/** The checkpoint id of `config`, or undefined. */
export function checkpointIdOf(config: RunnableConfig): string | undefined {
  return text(config.configurable?.checkpoint_id) ?? text(config.configurable?.thread_ts);
}

/** The thread and namespace of `config`, which `method` needs. */
export function requireTarget(config: RunnableConfig, method: string): Target {
  const threadId = threadOf(config);
  if (threadId === undefined) {
    throw new CkptError(
      'INVALID_ARGUMENT',
      `${method} needs config.configurable.thread_id (a string), got ${JSON.stringify(config.configurable?.thread_id)}.`,
      { details: { argument: 'thread_id' } },
    );
  }
  return { threadId, namespace: namespaceOf(config) };
}

/** The config LangGraph gets back for a stored checkpoint. */
export function configOf(target: Target, checkpointId: string): RunnableConfig {
  return {
    configurable: {
      thread_id: target.threadId,
      checkpoint_ns: target.namespace,
      checkpoint_id: checkpointId,
    },
  };
}
