/**
 * The active stream of a chat, for resumable streams: the id under which the `resumable-stream`
 * package keeps the response being streamed, kept beside the chat in a ckpt state scope so
 * that any server process can answer the resume request. Every change is a compare-and-set
 * (`update`), so a stream that ends never clears a newer stream that started meanwhile.
 */
import { CkptError, type JsonValue, type StateScope } from '@ckpt/core';

/** Make `streamId` the chat's active stream; returns the id it replaces, or null. */
export async function startStream(
  scope: StateScope,
  sessionId: string,
  streamId: string,
): Promise<string | null> {
  checkStreamId(streamId);
  let previous: string | null = null;
  await scope.update(sessionId, (current) => {
    previous = typeof current === 'string' ? current : null;
    return streamId;
  });
  return previous;
}

/** The chat's active stream id, or null when no stream is active. */
export async function activeStream(scope: StateScope, sessionId: string): Promise<string | null> {
  const current = await scope.get(sessionId);
  return typeof current === 'string' ? current : null;
}

/**
 * Clear the chat's active stream if it is still `streamId`; true when it was. A stream that was
 * replaced by a newer one leaves the newer one active.
 */
export async function endStream(
  scope: StateScope,
  sessionId: string,
  streamId: string,
): Promise<boolean> {
  checkStreamId(streamId);
  if ((await scope.get(sessionId)) !== streamId) return false;
  let cleared = false;
  await scope.update(sessionId, (current) => {
    cleared = current === streamId;
    return cleared ? null : ((current ?? null) as JsonValue);
  });
  return cleared;
}

function checkStreamId(streamId: unknown): void {
  if (typeof streamId !== 'string' || streamId === '') {
    throw new CkptError('INVALID_ARGUMENT', 'streamId must be a non-empty string.', {
      details: { argument: 'streamId' },
    });
  }
}
