/**
 * Errors across the writer thread's message port. A structured clone keeps an Error's message
 * but drops its class and its own properties, and the store maps errors by both (a CkptError
 * by its code and details, SQLite's by its `code`, such as SQLITE_BUSY); so each is sent as
 * data and built again on the other side as the class it was.
 */
import { CkptError, type CkptErrorCode, type CkptErrorDetails, isCkptError } from '@ckpt/core';
import Database from 'better-sqlite3';

/** An error as data. */
export type SentError =
  | {
      kind: 'ckpt';
      code: CkptErrorCode;
      message: string;
      details: CkptErrorDetails;
      stack?: string;
      cause?: SentError;
    }
  | { kind: 'sqlite'; code: string; message: string; stack?: string }
  | { kind: 'error'; name: string; message: string; code?: string; stack?: string };

/** `err` as data that a message port carries whole. */
export function sendError(err: unknown): SentError {
  if (isCkptError(err)) {
    return {
      kind: 'ckpt',
      code: err.code,
      message: err.message,
      details: cloneable(err.details),
      stack: err.stack,
      ...(err.cause !== undefined && { cause: sendError(err.cause) }),
    };
  }
  if (err instanceof Database.SqliteError) {
    return { kind: 'sqlite', code: err.code, message: err.message, stack: err.stack };
  }
  const error = err instanceof Error ? err : new Error(String(err));
  const code = (error as { code?: unknown }).code;
  return {
    kind: 'error',
    name: error.name,
    message: error.message,
    ...(typeof code === 'string' && { code }),
    stack: error.stack,
  };
}

/** The error `sent` stood for, as the class it was. */
export function receiveError(sent: SentError): Error {
  let err: Error;
  if (sent.kind === 'ckpt') {
    err = new CkptError(sent.code, sent.message, {
      details: sent.details,
      ...(sent.cause && { cause: receiveError(sent.cause) }),
    });
  } else if (sent.kind === 'sqlite') {
    err = new Database.SqliteError(sent.message, sent.code);
  } else {
    err = new Error(sent.message);
    err.name = sent.name;
    if (sent.code !== undefined) Object.assign(err, { code: sent.code });
  }
  if (sent.stack !== undefined) err.stack = sent.stack;
  return err;
}

/** Details are plain facts (names, numbers); anything a clone would refuse goes as its text. */
function cloneable(details: CkptErrorDetails): CkptErrorDetails {
  try {
    return structuredClone(details);
  } catch {
    return Object.fromEntries(
      Object.entries(details).map(([key, value]) => {
        try {
          return [key, structuredClone(value)];
        } catch {
          return [key, String(value)];
        }
      }),
    );
  }
}
