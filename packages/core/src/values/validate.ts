/** The input rules for names and numbers ("Rules and errors" in core's README). */
import { invalidArgument } from './errors.js';

const MAX_NAME_CODE_POINTS = 255;

/**
 * A session id, scope, state key or idempotency key: 1 to 255 code points, no NUL, no lone
 * surrogate. Everything else is allowed and kept exactly.
 */
export function checkName(value: unknown, argument: string): string {
  if (typeof value !== 'string') {
    throw invalidArgument(argument, `${argument} must be a string, got ${describe(value)}.`);
  }
  if (value.length === 0) throw invalidArgument(argument, `${argument} must not be empty.`);
  // Fast path: 255 UTF-16 units can never be more than 255 code points.
  if (value.length > MAX_NAME_CODE_POINTS && countCodePoints(value) > MAX_NAME_CODE_POINTS) {
    throw invalidArgument(
      argument,
      `${argument} is ${countCodePoints(value)} characters long; the limit is ${MAX_NAME_CODE_POINTS}.`,
    );
  }
  return checkStorableText(value, argument);
}

/** `value` when every backend can store it as text: no NUL, no lone surrogate. */
export function checkStorableText(value: string, argument: string): string {
  if (value.includes('\0')) {
    throw invalidArgument(argument, `${argument} must not contain the NUL character (\\0).`);
  }
  if (!value.isWellFormed()) {
    throw invalidArgument(
      argument,
      `${argument} contains a lone surrogate; it must be well-formed Unicode text.`,
    );
  }
  return value;
}

function countCodePoints(value: string): number {
  let n = 0;
  for (const _ of value) n++;
  return n;
}

/** A positive safe integer, such as a seq. */
export function checkPositiveInteger(value: unknown, argument: string): number {
  if (typeof value !== 'number' || !Number.isSafeInteger(value) || value < 1) {
    throw invalidArgument(
      argument,
      `${argument} must be an integer from 1 to ${Number.MAX_SAFE_INTEGER}, got ${describe(value)}.`,
    );
  }
  return value;
}

/** `expectedHead`: omitted, null (the session must not exist) or a seq. */
export function checkExpectedHead(value: unknown, allowNull: boolean): number | null | undefined {
  if (value === undefined) return undefined;
  if (value === null && allowNull) return null;
  return checkPositiveInteger(value, 'expectedHead');
}

/**
 * An options argument: omitted or a plain object. `owner` is the function it was given to
 * (`encrypt()`), which the messages name: `options` alone does not say whose options they are
 * when the call was one of several in a line or came from a helper.
 */
export function checkOptions<T extends object>(
  value: T | undefined,
  argument: string,
  known: readonly (keyof T & string)[],
  owner?: string,
): Partial<T> {
  if (value === undefined || value === null) return {};
  const whose = owner === undefined ? argument : `${owner} ${argument}`;
  if (typeof value !== 'object' || Array.isArray(value)) {
    throw invalidArgument(argument, `${whose} must be an object, got ${describe(value)}.`);
  }
  // A misspelt option (expectedhead, keep_last) would otherwise be ignored without a word,
  // turning off what the caller asked for. Keys set to undefined are as good as absent.
  for (const key of Object.keys(value)) {
    if ((value as Record<string, unknown>)[key] !== undefined && !known.includes(key as never)) {
      throw invalidArgument(
        argument,
        `${whose} has no option ${JSON.stringify(key)}; ${known.length === 1 ? 'its only option is' : 'the options are'} ${wordList(known)}.`,
      );
    }
  }
  return value;
}

/** `a`, `a and b`, `a, b and c`. */
function wordList(words: readonly string[]): string {
  return words.length < 2 ? words.join('') : `${words.slice(0, -1).join(', ')} and ${words.at(-1)}`;
}

/** The names among `methods` that `value` does not have as functions. */
export function missingMethods(value: unknown, methods: readonly string[]): string[] {
  return methods.filter(
    (method) => typeof (value as Record<string, unknown> | null)?.[method] !== 'function',
  );
}

/** `a()`, `a() and b()`, `a(), b() and c()`: method names for a message. */
export function methodList(methods: readonly string[]): string {
  return wordList(methods.map((m) => `${m}()`));
}

/** A short description of a value for error messages. */
export function describe(value: unknown): string {
  if (value === null) return 'null';
  if (Array.isArray(value)) return 'an array';
  switch (typeof value) {
    case 'string':
      return value.length > 40 ? `a string of length ${value.length}` : JSON.stringify(value);
    case 'number':
    case 'boolean':
    case 'bigint':
      return `${typeof value} ${String(value)}`;
    case 'object':
      return `an object (${value.constructor?.name ?? 'no prototype'})`;
    default:
      return typeof value;
  }
}

/** An AbortSignal given as an option (or undefined when none was). */
export function checkSignal(value: unknown, argument: string): AbortSignal | undefined {
  if (value === undefined) return undefined;
  if (
    typeof value !== 'object' ||
    value === null ||
    typeof (value as AbortSignal).aborted !== 'boolean' ||
    typeof (value as AbortSignal).addEventListener !== 'function'
  ) {
    throw invalidArgument(
      argument,
      `${argument} must be an AbortSignal (such as new AbortController().signal), got ${describe(value)}.`,
    );
  }
  return value as AbortSignal;
}
