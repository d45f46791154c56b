/** Small helpers shared by the cases. */
import {
  type CkptErrorCode,
  type ExportedCheckpoint,
  isCkptError,
  type Page,
  type PageOptions,
  type SessionImport,
} from '@ckpt/core';
import { expect } from 'vitest';

/** Assert that `promise` rejects with a CkptError of `code`; returns the error. */
export async function expectCkptError(
  promise: Promise<unknown> | (() => unknown),
  code: CkptErrorCode,
): Promise<Error & { code: string; details: Record<string, unknown> }> {
  let error: unknown;
  try {
    await (typeof promise === 'function' ? promise() : promise);
  } catch (err) {
    error = err;
  }
  expect(error, `expected a CkptError ${code}, but the call succeeded`).toBeDefined();
  expect(isCkptError(error), `expected a CkptError, got ${String(error)}`).toBe(true);
  expect((error as { code: string }).code).toBe(code);
  expect((error as Error).message.length).toBeGreaterThan(10);
  return error as Error & { code: string; details: Record<string, unknown> };
}

/**
 * Let timers and I/O run before going on. A backend may answer reads at once (in the same turn
 * of the event loop) and writes only after a timer or a socket: a loop of reads that never
 * waits for the next turn then holds the event loop, so the writes it waits for never land and
 * the case's own timeout never fires. So every loop that runs beside other calls, or that ends
 * only when something else happens, awaits this once a round.
 */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}

/** Walk every page of a listing and return all items, checking that each cursor leads on. */
export async function allPages<T>(
  fetch: (page: PageOptions) => Promise<Page<T>>,
  limit: number,
  maxItems = 20_000,
): Promise<T[]> {
  const items: T[] = [];
  const seen = new Set<string>();
  let cursor: string | null = null;
  for (let pages = 1; ; pages++) {
    const page: Page<T> = await fetch({ limit, cursor });
    expect(page.items.length).toBeLessThanOrEqual(limit);
    items.push(...page.items);
    if (page.cursor === null) return items;
    expect(typeof page.cursor).toBe('string');
    // A cursor seen before, more items than were ever written, or more pages than items (a
    // page may be short, but not empty that often) means paging loops.
    if (seen.has(page.cursor) || items.length > maxItems || pages > maxItems) {
      throw new Error(`paging does not end: ${items.length} items so far, cursor ${page.cursor}`);
    }
    seen.add(page.cursor);
    cursor = page.cursor;
    await yieldToEventLoop();
  }
}

/** A session to import: `checkpoints` as given, the head at the last of them. */
export function sessionToImport(
  sessionId: string,
  checkpoints: ExportedCheckpoint[],
): SessionImport & { checkpoints: ExportedCheckpoint[] } {
  return {
    sessionId,
    head: checkpoints.at(-1)!.seq,
    forkedFrom: null,
    createdAt: new Date(1_000),
    updatedAt: new Date(2_000),
    checkpoints,
  };
}

/** A checkpoint to import: data `seq`, on parent `seq - 1` (none for seq 1), made at `seq` s. */
export function checkpointToImport(
  seq: number,
  more: Partial<ExportedCheckpoint> = {},
): ExportedCheckpoint {
  const parent = seq === 1 ? null : seq - 1;
  return {
    seq,
    parent,
    data: seq,
    metadata: {},
    transcript: [],
    createdAt: new Date(seq * 1_000),
    ...more,
  };
}

/** Wait at least `ms` milliseconds (so timestamps differ). */
export function sleep(ms: number): Promise<void> {
  return new Promise((resolve) => setTimeout(resolve, ms));
}

/**
 * Run every task at once and wait until all have ended, then fail with the first failure.
 * Unlike Promise.all, nothing is left running after a failure to disturb later cases.
 */
export async function allSettledOrThrow<T>(tasks: Promise<T>[]): Promise<T[]> {
  const outcomes = await Promise.allSettled(tasks);
  const failed = outcomes.find((o) => o.status === 'rejected');
  if (failed) throw failed.reason;
  return outcomes.map((o) => (o as PromiseFulfilledResult<T>).value);
}

/** Run `count` tasks at once and wait for all, keeping each outcome. */
export function settleAll<T>(count: number, task: (i: number) => Promise<T>) {
  return Promise.allSettled(Array.from({ length: count }, (_, i) => task(i)));
}

/**
 * Odd but valid ids ("Rules and errors" in core's README): each one a different session on
 * every backend.
 */
export const ODD_IDS: string[] = [
  'a',
  'A',
  'a ',
  ' a',
  'caf\u00e9',
  'cafe\u0301',
  'a:b',
  'a:b:',
  '{a}',
  '{a}:b',
  '*',
  'a*',
  '?',
  '[a]',
  '%',
  'a%',
  '_',
  'a_',
  "'",
  "a'; DROP TABLE x; --",
  '"',
  '\\',
  'a\\',
  '/',
  'a/b',
  '\u{1F99C}',
  'line\nbreak',
  'tab\tchar',
  '\u0001',
  'x'.repeat(255),
  '\u{1F99C}'.repeat(255),
];

/** Ids every method must refuse with INVALID_ARGUMENT. */
export const INVALID_IDS: [string, unknown][] = [
  ['the empty string', ''],
  ['a NUL character', 'a\0b'],
  ['a lone high surrogate', 'a\ud800'],
  ['a lone low surrogate', '\udc00b'],
  ['256 code points', 'x'.repeat(256)],
  ['256 emoji', '\u{1F99C}'.repeat(256)],
  ['a number', 42],
  ['null', null],
  ['undefined', undefined],
  ['an object', { id: 'a' }],
];
