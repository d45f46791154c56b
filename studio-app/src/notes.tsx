/** Messages to the person: a failure with its code, or what a change did. */
import { ApiError } from './api.js';

/** A failure, with its `CkptError` code, or nothing when there is none. */
export function ErrorNote({ error }: { error: unknown }) {
  if (error === null || error === undefined) return null;
  const code = error instanceof ApiError ? error.code : 'ERROR';
  const message = error instanceof Error ? error.message : String(error);
  return (
    <div class="note note-error" role="alert">
      <strong>{code}</strong> {message}
    </div>
  );
}

/** What a change did. */
export function DoneNote({ text }: { text: string | null }) {
  if (text === null) return null;
  return (
    <div class="note note-done" role="status">
      {text}
    </div>
  );
}
