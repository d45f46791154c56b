/**
 * What changed between two JSON values, as a list of paths (`data.steps[3].at`) each added,
 * removed or changed. Objects are compared key by key, so that two objects with the same keys
 * and values in another order are equal (the order of keys carries no meaning a person looks
 * for in a diff); arrays index by index, so that an item appended shows as one `add` (an item
 * inserted at the front shows every later index changed). A value whose type changed (an
 * object that became an array, a number a string) is one `change`, whole. Keys are read as
 * own properties only, so that a key named `__proto__` is compared as the data it is.
 */
import type { JsonValue } from '@ckpt/core';

/** One difference: where, and what it was and became. */
export type JsonChange =
  | { path: string; op: 'add'; after: JsonValue }
  | { path: string; op: 'remove'; before: JsonValue }
  | { path: string; op: 'change'; before: JsonValue; after: JsonValue };

type JsonObject = { [key: string]: JsonValue };

const isObject = (value: JsonValue): value is JsonObject =>
  typeof value === 'object' && value !== null && !Array.isArray(value);

/** `path` and then `key`: `.key` where it reads as a name, else `["key"]`. */
export function pathOf(path: string, key: string | number): string {
  if (typeof key === 'number') return `${path}[${key}]`;
  if (/^[A-Za-z_$][\w$]*$/.test(key)) return path === '' ? key : `${path}.${key}`;
  return `${path}[${JSON.stringify(key)}]`;
}

/** The differences from `before` to `after`, under `path` ('' for the values themselves). */
export function diffJson(before: JsonValue, after: JsonValue, path = ''): JsonChange[] {
  const changes: JsonChange[] = [];
  walk(before, after, path, changes);
  return changes;
}

function walk(before: JsonValue, after: JsonValue, path: string, out: JsonChange[]): void {
  if (Array.isArray(before) && Array.isArray(after)) {
    const common = Math.min(before.length, after.length);
    for (let i = 0; i < common; i++) walk(before[i]!, after[i]!, pathOf(path, i), out);
    for (let i = common; i < before.length; i++)
      out.push({ path: pathOf(path, i), op: 'remove', before: before[i]! });
    for (let i = common; i < after.length; i++)
      out.push({ path: pathOf(path, i), op: 'add', after: after[i]! });
    return;
  }
  if (isObject(before) && isObject(after)) {
    for (const key of Object.keys(before)) {
      const was = own(before, key);
      if (Object.hasOwn(after, key)) walk(was, own(after, key), pathOf(path, key), out);
      else out.push({ path: pathOf(path, key), op: 'remove', before: was });
    }
    for (const key of Object.keys(after)) {
      if (!Object.hasOwn(before, key))
        out.push({ path: pathOf(path, key), op: 'add', after: own(after, key) });
    }
    return;
  }
  if (before === after) return;
  out.push({ path, op: 'change', before, after });
}

/** The own property `key` of `object`, read as data even when it is named `__proto__`. */
function own(object: JsonObject, key: string): JsonValue {
  return Object.getOwnPropertyDescriptor(object, key)!.value as JsonValue;
}
