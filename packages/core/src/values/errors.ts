/** Every code a `CkptError` can carry. */
export type CkptErrorCode =
  | 'INVALID_ARGUMENT'
  | 'NOT_FOUND'
  | 'CONFLICT'
  | 'PAYLOAD_TOO_LARGE'
  | 'UNSUPPORTED'
  | 'SCHEMA'
  | 'CLOSED'
  | 'BACKEND'
  | 'UNREADABLE'
  | 'EXPIRED';

/** Extra facts an error carries, for code that handles it. */
export interface CkptErrorDetails {
  /** The argument that was refused, e.g. `data.steps[3].at` or `expectedHead`. */
  argument?: string;
  /** For CONFLICT on `expectedHead`: the head the session really has (null: no session). */
  actualHead?: number | null;
  [key: string]: unknown;
}

// A marker that survives two copies of this package (ESM and CJS) in one process,
// where `instanceof` does not.
const MARKER = Symbol.for('@ckpt/core:CkptError');

/** The one error class of ckpt: test `err.code`, or use `isCkptError(err, code)`. */
export class CkptError extends Error {
  /** What went wrong, as one of a fixed set of codes. */
  readonly code: CkptErrorCode;
  /** Facts about the failure, such as the refused argument. */
  readonly details: CkptErrorDetails;
  /** For CONFLICT on `expectedHead`: the session's actual head (null when it does not exist). */
  readonly actualHead?: number | null;

  constructor(
    code: CkptErrorCode,
    message: string,
    options: { cause?: unknown; details?: CkptErrorDetails } = {},
  ) {
    super(message, options.cause === undefined ? undefined : { cause: options.cause });
    this.name = 'CkptError';
    this.code = code;
    this.details = options.details ?? {};
    if ('actualHead' in this.details) this.actualHead = this.details.actualHead;
    Object.defineProperty(this, MARKER, { value: true });
  }
}

/** True when `err` is a CkptError (from any copy of this package), optionally with `code`. */
export function isCkptError(err: unknown, code?: CkptErrorCode): err is CkptError {
  if (typeof err !== 'object' || err === null) return false;
  if (!(MARKER in err) && !(err instanceof CkptError)) return false;
  return code === undefined || (err as CkptError).code === code;
}

/** Shorthand for the most common refusal. */
export function invalidArgument(argument: string, message: string): CkptError {
  return new CkptError('INVALID_ARGUMENT', message, { details: { argument } });
}

/** The `code` of a driver or system error, as text ('undefined' when it has none). */
export function errorCode(err: unknown): string {
  return String((err as { code?: unknown } | null)?.code);
}

/**
 * What to do about a connection lost during a call, however the driver words the loss: the
 * server may have committed the call before the connection went, or not.
 */
export const CONNECTION_LOST_HINT =
  'the call may or may not have run: retry it (a checkpoint with the same idempotencyKey)';

const BROKEN_MID_CALL = `the connection broke, so ${CONNECTION_LOST_HINT}`;

// What to do about Node's own errors for a connection that could not be made or was lost;
// the drivers pass them through with these codes.
const CONNECTION_HINTS: Record<string, string> = {
  ECONNREFUSED:
    'nothing accepts connections there: check that the server is running and that the URL names its host and port',
  ENOTFOUND: 'the host name does not resolve: check the host in the URL',
  EAI_AGAIN: 'the host name could not be resolved now: check the host in the URL and the DNS',
  ETIMEDOUT: 'the server did not answer in time: check the host, the port and the network',
  EHOSTUNREACH: 'the host cannot be reached: check the host in the URL and the network',
  ECONNRESET: BROKEN_MID_CALL,
  EPIPE: BROKEN_MID_CALL,
};

/** What to do about a failure a driver or server raised, for its BACKEND error; undefined: no hint. */
export type ErrorHint = (err: unknown) => string | undefined;

/**
 * Wrap anything that is not a CkptError as BACKEND, keeping it as `cause`. Its message says what
 * to do: about the server's own codes through the backend's `errorHint`, since only the adapter
 * knows its driver's codes (and can tell, say, a handshake that timed out from a host that
 * did not answer), and else about Node's connection errors here.
 */
export function toCkptError(err: unknown, backendName: string, errorHint?: ErrorHint): CkptError {
  if (isCkptError(err)) return err;
  const reason = redactPasswords(err instanceof Error ? err.message : String(err));
  const hint = hintFor(err, errorHint) ?? CONNECTION_HINTS[errorCode(err)];
  // A reason that ends a sentence of its own ("… closed the connection.") loses its full stop
  // to the hint's.
  const message = hint ? `${reason.replace(/\.$/, '')}; ${hint}.` : reason;
  return new CkptError('BACKEND', `${backendName} backend failed: ${message}`, { cause: err });
}

/** The backend's hint for `err`; a hint that fails itself is no hint, never a new error. */
function hintFor(err: unknown, errorHint: ErrorHint | undefined): string | undefined {
  try {
    return errorHint?.(err);
  } catch {
    return undefined;
  }
}

/** The error for a capability the backend does not declare. */
export function unsupported(
  backendName: string,
  call: string,
  capability: 'listSessions' | 'listStateKeys' | 'watch' | 'tags',
): CkptError {
  const needs = {
    listSessions: 'sessions() of a native backend, or list() of the KV store under kvBackend',
    listStateKeys:
      'stateKeys() and stateScopes() of a native backend, or list() of the KV store under kvBackend',
    watch: 'changes() of a native backend: its change log',
    tags: 'setTags() of a native backend, and an index of the tags behind its sessions()',
  }[capability];
  return new CkptError(
    'UNSUPPORTED',
    `${call} is not supported by the ${backendName} backend: it needs the '${capability}' capability (${needs}).`,
    { details: { capability } },
  );
}

/** Replace the password of any URL in `text` with `***`, so that no message leaks it. */
export function redactPasswords(text: string): string {
  // Up to the last @ of the URL: a password typed without percent-encoding may hold @ or /.
  return text.replace(/(\b[a-z][a-z0-9+.-]*:\/\/[^:/?#@\s]*:)\S*@/gi, '$1***@');
}
