/**
 * The checks a message from the application passes before anything is compared or written: the
 * shape every `UIMessage` has (an id, one of the AI SDK's three roles, an array of typed parts)
 * and values JSON carries exactly, as ckpt stores them. A refusal is INVALID_ARGUMENT naming
 * the path of what is wrong the way ckpt's own value checks name it (`messages[2].parts[0].data`),
 * so that a bad message fails before a chat is created for it, not halfway through a save.
 */
import { CkptError } from '@ckpt/core';
import type { UIMessage } from 'ai';

const ROLES: readonly string[] = ['system', 'user', 'assistant'];
const IDENTIFIER = /^[A-Za-z_$][A-Za-z0-9_$]*$/;

/**
 * Refuse `value` unless it has the shape of a `UIMessage`: an object with a non-empty string
 * id, a role of 'system', 'user' or 'assistant', and parts that are objects with a string type.
 * Cheap: it looks at no part's content.
 */
export function checkShape(value: unknown, path: string): asserts value is UIMessage {
  if (!isPlainObject(value)) {
    throw refuse(
      path,
      `${path} is not a UIMessage (an object with an id, a role and parts), got ${kindOf(value)}.`,
    );
  }
  const { id, role, parts } = value;
  if (typeof id !== 'string' || id === '') {
    throw refuse(`${path}.id`, `${path}.id must be a non-empty string, got ${kindOf(id)}.`);
  }
  if (typeof role !== 'string' || !ROLES.includes(role)) {
    throw refuse(
      `${path}.role`,
      `${path}.role must be 'system', 'user' or 'assistant', got ${kindOf(role)}.`,
    );
  }
  if (!Array.isArray(parts)) {
    throw refuse(`${path}.parts`, `${path}.parts must be an array of parts, got ${kindOf(parts)}.`);
  }
  for (const [i, part] of parts.entries()) {
    const at = `${path}.parts[${i}]`;
    if (!isPlainObject(part)) throw refuse(at, `${at} must be an object, got ${kindOf(part)}.`);
    if (typeof part.type !== 'string' || part.type === '') {
      throw refuse(
        `${at}.type`,
        `${at}.type must be a non-empty string, got ${kindOf(part.type)}.`,
      );
    }
  }
}

/** Refuse `value` unless it is a `UIMessage` (`checkShape`) that JSON carries exactly. */
export function checkMessage(value: unknown, path: string): asserts value is UIMessage {
  checkShape(value, path);
  checkJson(value, path, []);
}

/** Refuse what JSON cannot carry exactly, anywhere in `value`, as ckpt refuses it on write. */
function checkJson(value: unknown, path: string, ancestors: object[]): void {
  switch (typeof value) {
    case 'string':
    case 'boolean':
      return;
    case 'number':
      if (!Number.isFinite(value)) throw notJson(path, String(value));
      return;
    case 'bigint':
      throw notJson(path, 'a bigint (store it as a string)');
    case 'undefined':
      throw notJson(path, 'undefined');
    case 'symbol':
    case 'function':
      throw notJson(path, `a ${typeof value}`);
  }
  if (value === null) return;
  const obj = value as object;
  if (ancestors.includes(obj)) throw notJson(path, 'a circular reference');
  ancestors.push(obj);
  if (Array.isArray(obj)) {
    for (let i = 0; i < obj.length; i++) checkJson(obj[i], `${path}[${i}]`, ancestors);
  } else {
    if (!isPlainObject(obj)) throw notJson(path, kindOf(obj));
    for (const [key, item] of Object.entries(obj)) {
      // An undefined property is dropped, as JSON.stringify drops it.
      if (item !== undefined) checkJson(item, childPath(path, key), ancestors);
    }
  }
  ancestors.pop();
}

function isPlainObject(value: unknown): value is Record<string, unknown> {
  if (typeof value !== 'object' || value === null || Array.isArray(value)) return false;
  const proto = Object.getPrototypeOf(value);
  return proto === Object.prototype || proto === null;
}

function childPath(path: string, key: string): string {
  return IDENTIFIER.test(key) ? `${path}.${key}` : `${path}[${JSON.stringify(key)}]`;
}

/** What a value is, for a refusal. */
function kindOf(value: unknown): string {
  if (value === null || value === undefined) return String(value);
  if (Array.isArray(value)) return 'an array';
  if (value instanceof Date) return 'a Date (store value.toISOString() instead)';
  if (typeof value === 'string') {
    return value.length > 40 ? `a string of length ${value.length}` : JSON.stringify(value);
  }
  if (typeof value === 'object') {
    const name = (value as { constructor?: { name?: string } }).constructor?.name;
    return name && name !== 'Object' ? `an instance of ${name}` : 'an object';
  }
  return `${typeof value} ${String(value)}`;
}

function notJson(path: string, what: string): CkptError {
  return refuse(
    path,
    `${path} is ${what}, which a stored message cannot hold: messages are stored as JSON (null, booleans, finite numbers, strings, arrays, plain objects); nothing was saved.`,
  );
}

function refuse(path: string, message: string): CkptError {
  return new CkptError('INVALID_ARGUMENT', message, { details: { argument: path } });
}
