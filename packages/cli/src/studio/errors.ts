/**
 * How the studio says no: every failure is JSON `{ error: { code, message } }` with the
 * `CkptError` code (or the studio's own `UNAUTHORIZED` and `FORBIDDEN`), an HTTP status that fits it, and a
 * message from which the store's URL (and any password in it) has been taken out.
 */
import { type CkptErrorCode, isCkptError } from '@ckpt/core';
import { redactPasswords } from '@ckpt/core/adapter';
import { missingKeyMessage } from '../codecs.js';

/**
 * The codes the studio's API answers with: core's, `UNAUTHORIZED` (401) for a request without
 * the token, and `FORBIDDEN` (403) for one the studio refuses whoever sends it (a foreign host
 * name or origin, a change without its header or to a read-only studio): no store operation
 * fails so, and core has no code for them.
 */
export type StudioErrorCode = CkptErrorCode | 'UNAUTHORIZED' | 'FORBIDDEN';

/** A refusal of the studio's own (no token, a foreign origin, a route it does not have), with its HTTP status. */
export class StudioError extends Error {
  readonly status: number;
  readonly code: StudioErrorCode;

  constructor(status: number, code: StudioErrorCode, message: string) {
    super(message);
    this.name = 'StudioError';
    this.status = status;
    this.code = code;
  }
}

/** The HTTP status the studio answers each `CkptError` code with, as the README's table lists them. */
export const STATUS: Record<CkptErrorCode, number> = {
  INVALID_ARGUMENT: 400,
  NOT_FOUND: 404,
  CONFLICT: 409,
  PAYLOAD_TOO_LARGE: 413,
  UNSUPPORTED: 501,
  SCHEMA: 500,
  CLOSED: 503,
  BACKEND: 502,
  UNREADABLE: 500,
  EXPIRED: 410,
};

/** The body of an error response. */
export interface ErrorBody {
  error: { code: StudioErrorCode; message: string };
}

/** The status and body for `err`, its message as `say` words it. */
export function errorResponse(
  err: unknown,
  say: (err: unknown) => string,
): { status: number; body: ErrorBody } {
  if (err instanceof StudioError) {
    return { status: err.status, body: { error: { code: err.code, message: say(err) } } };
  }
  if (isCkptError(err)) {
    return { status: STATUS[err.code], body: { error: { code: err.code, message: say(err) } } };
  }
  // Not a CkptError: a fault of the studio itself, said as the store failing, with its message.
  return { status: 500, body: { error: { code: 'BACKEND', message: say(err) } } };
}

/**
 * How the studio words an error for the page: with the store's URL taken out (see `redactor`),
 * and a value sealed under a key it was not given (`keyNames` are those it was) said as what
 * to start it with, since the page can do nothing about it.
 */
export function messenger(storeUrl: string, keyNames: string[]): (err: unknown) => string {
  const redact = redactor(storeUrl);
  return (err) =>
    redact(
      missingKeyMessage(
        err,
        () => keyNames,
        'start ckpt studio again with its key, in CKPT_KEYS or in a file named by --key-file.',
      ) ?? (err instanceof Error ? err.message : String(err)),
    );
}

/**
 * A function that takes the store's URL out of a text: the URL as given, without its query,
 * with its password hidden, the password itself, and a SQLite file's path, each replaced by
 * `<store>` (the password by `***`), and any other URL's password hidden.
 */
export function redactor(url: string): (text: string) => string {
  const secrets = new Set<string>();
  const add = (s: string | undefined) => {
    if (s !== undefined && s.length >= 3) secrets.add(s);
  };
  const base = url.split('?')[0]!;
  for (const form of [url, base]) {
    add(form);
    add(redactPasswords(form));
  }
  if (/^sqlite:/i.test(base)) add(base.slice('sqlite:'.length));
  const passwords: string[] = [];
  try {
    const parsed = new URL(url);
    for (const p of [parsed.password, decodeURIComponent(parsed.password)]) {
      if (p.length > 0) passwords.push(p);
    }
  } catch {
    // Not a URL with a password.
  }
  const ordered = [...secrets].sort((a, b) => b.length - a.length);
  return (text) => {
    let out = text;
    for (const secret of ordered) out = out.split(secret).join('<store>');
    for (const password of passwords) out = out.split(password).join('***');
    return redactPasswords(out);
  };
}
