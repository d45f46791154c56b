import { describe, expect, it } from 'vitest';
import { type ConnectionSpec, openConnection } from '../src/adapter.js';
import { isCkptError } from '../src/index.js';

interface Handle {
  query(): void;
  end(): void;
  from?: string;
}

const opened: string[] = [];
const spec: ConnectionSpec<Handle> = {
  factory: 'demo',
  handle: 'pool',
  handleKind: 'a demo pool',
  methods: ['query', 'end'],
  example: 'demo://host/db',
  open(url) {
    if (!url.startsWith('demo://')) {
      // As Node's URL parser does: the whole input, password included, on the error.
      throw Object.assign(new TypeError('Invalid URL'), { input: url });
    }
    opened.push(url);
    return { query() {}, end() {}, from: url };
  },
};

function refusal(options: unknown, given: ConnectionSpec<Handle> = spec) {
  try {
    openConnection(options, given);
  } catch (err) {
    expect(isCkptError(err, 'INVALID_ARGUMENT')).toBe(true);
    return err as Error & { details: { argument: string } };
  }
  throw new Error('expected INVALID_ARGUMENT');
}

describe('openConnection', () => {
  it('opens a handle on the url, owned, in the default namespace', () => {
    const { handle, owned, namespace } = openConnection({ url: 'demo://h/db' }, spec);
    expect(handle.from).toBe('demo://h/db');
    expect(owned).toBe(true);
    expect(namespace).toBe('ckpt');
  });

  it('adopts a given handle without opening one, not owned', () => {
    const pool = { query() {}, end() {} };
    const before = opened.length;
    const result = openConnection({ pool, url: 'demo://ignored', namespace: 'app' }, spec);
    expect(result).toEqual({
      handle: pool,
      owned: false,
      namespace: 'app',
      existing: undefined,
      switches: {},
    });
    expect(opened.length).toBe(before);
  });

  it('reads create: false as where the store must exist, without the password; anything but a boolean is refused', () => {
    const opened = openConnection({ url: 'demo://app:s3cret@h/db', create: false }, spec);
    expect(opened.existing).toEqual({
      at: 'demo://app:***@h/db',
      check: 'the URL and the namespace',
    });
    const pool = { query() {}, end() {} };
    expect(openConnection({ pool, create: false }, spec).existing).toEqual({
      at: 'the given pool',
      check: 'the namespace',
    });
    expect(openConnection({ url: 'demo://h', create: true }, spec).existing).toBeUndefined();
    let refused: unknown;
    try {
      openConnection({ url: 'demo://h', create: 0 }, spec);
    } catch (err) {
      refused = err;
    }
    expect(isCkptError(refused, 'INVALID_ARGUMENT')).toBe(true);
    expect((refused as Error).message).toMatch(/needs create to be true or false; got number 0/);
  });

  it('turns a given handle into the one the adapter uses when told how', () => {
    const inner = { query() {}, end() {} };
    const wrapped = { promise: () => inner };
    const { handle } = openConnection(
      { pool: wrapped },
      { ...spec, adopt: (g) => (g as typeof wrapped).promise() },
    );
    expect(handle).toBe(inner);
  });

  it("reads the adapter's switches: their defaults unless given, anything but a boolean refused", () => {
    const withSwitch = { ...spec, switches: { fast: true, eager: false } };
    expect(openConnection({ url: 'demo://h' }, withSwitch).switches).toEqual({
      fast: true,
      eager: false,
    });
    expect(openConnection({ url: 'demo://h', eager: true }, withSwitch).switches).toEqual({
      fast: true,
      eager: true,
    });
    expect(openConnection({ url: 'demo://h', fast: false }, withSwitch).switches).toEqual({
      fast: false,
      eager: false,
    });
    const before = opened.length;
    const err = refusal({ url: 'demo://h', fast: 'no' }, withSwitch);
    expect(err.details.argument).toBe('fast');
    expect(err.message).toBe('demo() needs fast to be true or false; got "no".');
    expect(opened.length).toBe(before);
    // Not a switch of this adapter: refused as any unknown option is.
    expect(refusal({ url: 'demo://h', fast: false }).message).toContain(
      'demo() options has no option "fast"',
    );
  });

  it('refuses options without a url or a handle, showing a good one', () => {
    for (const options of [
      undefined,
      null,
      'demo://h',
      {},
      { url: '' },
      { url: 42 },
      { pool: null },
    ]) {
      const err = refusal(options);
      expect(err.message).toContain(
        "demo() needs { url: 'demo://host/db' } or { pool } (a demo pool)",
      );
    }
  });

  it('refuses a bad namespace before opening anything', () => {
    const before = opened.length;
    expect(refusal({ url: 'demo://h', namespace: 'Bad-Name' }).details.argument).toBe('namespace');
    expect(opened.length).toBe(before);
  });

  it('refuses a handle that lacks a method the adapter calls, naming what is missing', () => {
    const err = refusal({ pool: { query() {} } });
    expect(err.details.argument).toBe('pool');
    expect(err.message).toBe(
      'demo() needs { pool } to be a demo pool; got an object (Object), which lacks end().',
    );
    expect(refusal({ pool: 'demo://h' }).message).toMatch(/lacks query\(\) and end\(\)/);
  });

  it('refuses a url the driver cannot read, showing neither it nor its password', () => {
    const secret = 'hunter2-very-secret';
    const err = refusal({ url: `mysql://me:${secret}@db:3306:1/x` });
    expect(err.details.argument).toBe('url');
    expect(err.message).toBe(
      "demo() cannot read its url (Invalid URL); pass one such as 'demo://host/db', with any special character of the user name or password percent-encoded.",
    );
    expect(err.cause).toBeUndefined();
    expect(JSON.stringify(err, Object.getOwnPropertyNames(err))).not.toContain(secret);
  });
});
