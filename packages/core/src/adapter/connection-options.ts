/**
 * The options every server adapter takes: `{ url }` or an existing driver handle (a pool or a
 * client), `namespace` and `create`. Checked here once, so that each adapter refuses a bad one the same
 * way: with INVALID_ARGUMENT, a message that shows a good one, and never the URL's password.
 */
import { invalidArgument, redactPasswords } from '../values/errors.js';
import { checkOptions, describe, methodList, missingMethods } from '../values/validate.js';
import { checkNamespace } from './namespace.js';
import { checkCreate, type StoreLocation } from './open-existing.js';

/** How one adapter opens and recognises its driver handle. */
export interface ConnectionSpec<H> {
  /** The factory's name, for messages: `postgres`. */
  factory: string;
  /** The option that holds an existing handle: `pool` or `client`. */
  handle: string;
  /** What that handle must be, for messages: `a pg.Pool`. */
  handleKind: string;
  /** The methods the adapter calls on a handle, which it must have. */
  methods: readonly string[];
  /** A URL to show in messages: `postgres://user@host:5432/db`. */
  example: string;
  /** Options of this adapter alone, each a boolean, with its default. */
  switches?: Readonly<Record<string, boolean>>;
  /** Refuse a namespace this server cannot use, beyond the common rule (throws). */
  refuseNamespace?(namespace: string): void;
  /** Open a handle on `url`; it may throw when the driver cannot read the URL. */
  open(url: string): H;
  /** Turn a given handle into the one the adapter uses (default: as given). */
  adopt?(given: unknown): unknown;
}

/** A handle, whether the adapter opened it (and so must close it), the namespace and switches. */
export interface OpenedConnection<H> {
  handle: H;
  owned: boolean;
  namespace: string;
  /**
   * Set when the store must exist already (`create: false`), so that the adapter creates
   * nothing: where it is looked for, for the messages (the URL with its password hidden, or
   * `the given pool`), and what to check when it is not there.
   */
  existing: Omit<StoreLocation, 'where'> | undefined;
  /** Each of the spec's switches: as given, or its default. */
  switches: Record<string, boolean>;
}

/** Check `options` and open (or adopt) the handle it names. */
export function openConnection<H>(options: unknown, spec: ConnectionSpec<H>): OpenedConnection<H> {
  const usage = `${spec.factory}() needs { url: '${spec.example}' } or { ${spec.handle} } (${spec.handleKind})`;
  if (typeof options !== 'object' || options === null) {
    throw invalidArgument('options', `${usage}.`);
  }
  const given = checkOptions(
    options as Record<string, unknown>,
    'options',
    ['url', spec.handle, 'namespace', 'create', ...Object.keys(spec.switches ?? {})],
    `${spec.factory}()`,
  );
  const namespace = checkNamespace(given.namespace);
  const create = checkCreate(given.create, spec.factory);
  spec.refuseNamespace?.(namespace);
  const switches: Record<string, boolean> = {};
  for (const [name, fallback] of Object.entries(spec.switches ?? {})) {
    const value = given[name] ?? fallback;
    if (typeof value !== 'boolean') {
      throw invalidArgument(
        name,
        `${spec.factory}() needs ${name} to be true or false; got ${describe(value)}.`,
      );
    }
    switches[name] = value;
  }
  if (given[spec.handle] !== undefined && given[spec.handle] !== null) {
    const handle = spec.adopt ? spec.adopt(given[spec.handle]) : given[spec.handle];
    const missing = missingMethods(handle, spec.methods);
    if (missing.length > 0) {
      throw invalidArgument(
        spec.handle,
        `${spec.factory}() needs { ${spec.handle} } to be ${spec.handleKind}; got ${describe(handle)}, which lacks ${methodList(missing)}.`,
      );
    }
    const existing = create
      ? undefined
      : { at: `the given ${spec.handle}`, check: 'the namespace' };
    return { handle: handle as H, owned: false, namespace, existing, switches };
  }
  const url = given.url;
  if (typeof url !== 'string' || url === '') {
    throw invalidArgument('url', `${usage}.`);
  }
  try {
    const handle = spec.open(url);
    const existing = create
      ? undefined
      : { at: redactPasswords(url), check: 'the URL and the namespace' };
    return { handle, owned: true, namespace, existing, switches };
  } catch (err) {
    // Neither the URL nor the driver's error goes into this one: both can hold the password
    // (Node's ERR_INVALID_URL keeps the whole URL as `input`).
    const reason = redactPasswords(err instanceof Error ? err.message : String(err));
    throw invalidArgument(
      'url',
      `${spec.factory}() cannot read its url (${reason}); pass one such as '${spec.example}', with any special character of the user name or password percent-encoded.`,
    );
  }
}
