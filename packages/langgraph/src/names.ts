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

/**
 * The session of one namespace of a thread: a JSON array, so that no thread id or namespace
 * can be mistaken for another pair, whatever characters they hold.
 */
export function sessionOf(threadId: string, namespace: string): string {
  return JSON.stringify([threadId, namespace]);
}

/** The thread and namespace of a session this saver made, or null for any other session. */
export function targetOfSession(sessionId: string): Target | null {
  if (!sessionId.startsWith('[')) return null;
  try {
    const parsed: unknown = JSON.parse(sessionId);
    if (
      Array.isArray(parsed) &&
      parsed.length === 2 &&
      typeof parsed[0] === 'string' &&
      typeof parsed[1] === 'string'
    ) {
      return { threadId: parsed[0], namespace: parsed[1] };
    }
  } catch {}
  return null;
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
  /** Channel values that pruned checkpoints held and kept checkpoints still use. */
  carried: (sessionId: string) => `c:${sessionId}`,
  /** The ids of the newest checkpoints deleteThread removed from a session (a JSON array). */
  deleted: (sessionId: string) => `d:${sessionId}`,
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
