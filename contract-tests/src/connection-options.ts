/**
 * For server adapters: their factories refuse bad options at once with INVALID_ARGUMENT, and
 * a password in a URL shows nowhere in the error, whatever else is wrong with the URL.
 */
import { expect } from 'vitest';
import { expectCkptError } from './util.js';

/** What the checks need to know of an adapter's options. */
export interface ConnectionOptionsShape {
  /** The URL scheme: `postgres`. */
  scheme: string;
  /** The option that holds an existing driver handle: `pool` or `client`. */
  handle: string;
  /** The adapter's boolean options, such as `preparedStatements`. */
  switches?: readonly string[];
}

const SECRET = 'hunter2-very-secret';

/** Everything an error shows: message, stack, own properties, and the same of its causes. */
function shown(err: unknown): string {
  const parts: string[] = [];
  const seen = new Set<unknown>();
  // A cause chain may loop back on itself: each error is shown once.
  for (let e = err; e !== undefined && e !== null && !seen.has(e); e = (e as Error).cause) {
    seen.add(e);
    parts.push(JSON.stringify(e, Object.getOwnPropertyNames(e)), String((e as Error).stack));
  }
  return parts.join('\n');
}

/** Check that `factory` (such as `postgres` or `postgresKv`) refuses every bad option. */
export async function expectBadConnectionOptionsRefused(
  factory: (options: never) => unknown,
  { scheme, handle, switches = [] }: ConnectionOptionsShape,
): Promise<void> {
  const refuse = (options: unknown) =>
    expectCkptError(() => factory(options as never), 'INVALID_ARGUMENT');

  for (const options of [undefined, null, {}, { url: '' }, { url: 42 }]) await refuse(options);
  expect(
    (await refuse({ url: `${scheme}://127.0.0.1`, namespace: 'Bad-Name' })).details.argument,
  ).toBe('namespace');

  // A misspelt option would otherwise put the store in the default namespace without a word.
  const typo = await refuse({ url: `${scheme}://127.0.0.1`, namepsace: 'agents' });
  expect(typo.message).toContain('"namepsace"');
  expect(typo.message).toContain('namespace');

  // A switch given as a string or a number would otherwise be read as true or false by luck.
  for (const name of switches) {
    for (const value of ['false', 0, 'off']) {
      const err = await refuse({ url: `${scheme}://127.0.0.1`, [name]: value });
      expect(err.details.argument).toBe(name);
      expect(err.message).toMatch(/true or false/);
    }
  }

  // Something else than the driver's handle, such as another driver's client.
  for (const wrong of [{}, { query: 'not a function' }, 'a connection string']) {
    const err = await refuse({ [handle]: wrong });
    expect(err.details.argument).toBe(handle);
    expect(err.message).toMatch(/lacks .*\(\)/);
  }

  // URLs the driver cannot read: a port out of range, two ports, an unclosed IPv6 bracket.
  for (const url of [
    `${scheme}://me:${SECRET}@127.0.0.1:99999/test`,
    `${scheme}://me:${SECRET}@127.0.0.1:1:2/test`,
    `${scheme}://me:${SECRET}@[::1/test`,
  ]) {
    const err = await refuse({ url });
    expect(err.details.argument).toBe('url');
    expect(err.message).toMatch(/cannot read its url/);
    expect(shown(err)).not.toContain(SECRET);
  }
}
