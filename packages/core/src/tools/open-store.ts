/** `openStore(url)`: pick and load a backend package from a connection string. */

import type { CheckpointBackend } from '../adapter/backend.js';
import { checkNamespace } from '../adapter/namespace.js';
import { checkCreate } from '../adapter/open-existing.js';
import { CheckpointStore } from '../store/store.js';
import type { OpenStoreOptions } from '../store/types.js';
import { CkptError, invalidArgument, redactPasswords, toCkptError } from '../values/errors.js';
import { checkOptions } from '../values/validate.js';
import { loadPackage } from './adapter-loading.js';

type Factory = (options: Record<string, unknown>) => CheckpointBackend | Promise<CheckpointBackend>;

interface Scheme {
  /** The adapter package and its driver, named in the error when they are not installed. */
  pkg: string;
  driver: string | null;
  factory: string;
  /**
   * The query parameters ckpt reads besides `namespace`, or null for a server URL, whose
   * other parameters stay in the URL for the driver (such as `sslmode`).
   */
  params: readonly string[] | null;
  /** The adapter's options for this URL (namespace added by the caller). */
  options(url: string, rest: string, params: Record<string, string>): Record<string, unknown>;
}

const server = (pkg: string, driver: string, factory: string): Scheme => ({
  pkg,
  driver,
  factory,
  params: null,
  options: (url) => ({ url }),
});

const SCHEMES: Record<string, Scheme> = {
  'memory:': {
    pkg: '@ckpt/memory',
    driver: null,
    factory: 'memory',
    params: [],
    options: () => ({}),
  },
  'sqlite:': {
    pkg: '@ckpt/sqlite',
    driver: 'better-sqlite3',
    factory: 'sqlite',
    params: ['synchronous'],
    options: (_url, rest, params) => ({ path: sqlitePath(rest), ...params }),
  },
  'pglite:': {
    pkg: '@ckpt/pglite',
    driver: '@electric-sql/pglite',
    factory: 'pglite',
    params: [],
    options: (_url, rest) => pglitePlace(rest),
  },
  'redis:': server('@ckpt/redis', 'ioredis', 'redis'),
  'rediss:': server('@ckpt/redis', 'ioredis', 'redis'),
  'postgres:': server('@ckpt/postgres', 'pg', 'postgres'),
  'postgresql:': server('@ckpt/postgres', 'pg', 'postgres'),
  'mysql:': server('@ckpt/mysql', 'mysql2', 'mysql'),
};

/**
 * Split off `namespace` and, for a scheme that lists its parameters, those (any other is
 * refused); a server URL keeps its other parameters for the driver.
 */
function takeParams(
  url: string,
  scheme: Scheme,
): { url: string; namespace: string | undefined; params: Record<string, string> } {
  const q = url.indexOf('?');
  if (q === -1) return { url, namespace: undefined, params: {} };
  const query = new URLSearchParams(url.slice(q + 1));
  for (const name of ['namespace', ...(scheme.params ?? [])]) {
    if (query.getAll(name).length > 1) {
      throw invalidArgument(
        'url',
        `openStore: the URL gives ${JSON.stringify(name)} more than once; give it once.`,
      );
    }
  }
  const namespace = query.get('namespace') ?? undefined;
  query.delete('namespace');
  if (scheme.params === null) {
    const rest = query.toString();
    return { url: url.slice(0, q) + (rest ? `?${rest}` : ''), namespace, params: {} };
  }
  const params: Record<string, string> = {};
  for (const [name, value] of query) {
    if (!scheme.params.includes(name)) {
      throw invalidArgument(
        'url',
        `openStore: ${scheme.factory} URLs take no parameter ${JSON.stringify(name)}; they take ${['namespace', ...scheme.params].join(', ')}.`,
      );
    }
    params[name] = value;
  }
  return { url: url.slice(0, q), namespace, params };
}

/** The file of a `sqlite:` URL: what follows the scheme, as written. */
function sqlitePath(rest: string): string {
  // 'sqlite://x' reads as a host x to some and as the path //x (the root) to others.
  if (rest.startsWith('//')) {
    throw invalidArgument(
      'url',
      "openStore: write a SQLite file as 'sqlite:./agent.db' (relative to the working directory) or 'sqlite:/var/lib/agent.db' (absolute), without '//'.",
    );
  }
  return rest;
}

/** The database of a `pglite:` URL: `memory`, or a directory as written. */
function pglitePlace(rest: string): { path?: string } {
  if (rest === 'memory') return {};
  if (rest === '' || rest.startsWith('//')) {
    throw invalidArgument(
      'url',
      "openStore: write a PGlite database as 'pglite:memory' or 'pglite:./ckpt-data' (a directory, relative to the working directory, or absolute), without '//'.",
    );
  }
  return { path: rest };
}

/**
 * Open a store from a URL: `memory:`, `sqlite:./agent.db`, `sqlite::memory:`, `pglite:memory`,
 * `pglite:./dir`, `redis://…`, `postgres://…`, `mysql://…`, with an optional `?namespace=`. Loads `@ckpt/<backend>` on demand.
 * With `{ create: false }` it opens only a store that exists, changing nothing, and rejects
 * with NOT_FOUND where there is none.
 */
export async function openStore(url: string, options?: OpenStoreOptions): Promise<CheckpointStore> {
  const { create: given, ...storeOptions } = checkOptions(
    options,
    'options',
    ['maxPayloadBytes', 'codecs', 'retention', 'create'],
    'openStore()',
  );
  const create = checkCreate(given, 'openStore');
  if (typeof url !== 'string') {
    throw invalidArgument(
      'url',
      'openStore(url) needs a string such as "memory:" or "sqlite:./agent.db".',
    );
  }
  const colon = url.indexOf(':');
  const scheme = SCHEMES[url.slice(0, colon + 1).toLowerCase()];
  if (colon < 1 || scheme === undefined) {
    const shown = JSON.stringify(redactPasswords(url));
    const schemes = Object.keys(SCHEMES).join(', ');
    // A file path given alone (`agent.db`, `C:\data\agent.db`) is most likely a SQLite file.
    if (url !== '' && (colon === -1 || /^[A-Za-z]:[\\/]/.test(url))) {
      throw invalidArgument(
        'url',
        `openStore: ${shown} has no URL scheme; for a SQLite file write ${JSON.stringify(`sqlite:${redactPasswords(url)}`)}, else start it with one of ${schemes}.`,
      );
    }
    throw invalidArgument(
      'url',
      url === ''
        ? `openStore(url) needs a URL, such as "sqlite:./agent.db"; got an empty string.`
        : `openStore: unknown URL scheme in ${shown}; use one of ${schemes}.`,
    );
  }
  const { url: plain, namespace, params } = takeParams(url, scheme);
  const factoryOptions = {
    ...scheme.options(plain, plain.slice(colon + 1), params),
    namespace: checkNamespace(namespace),
    // Only when false, so that an adapter older than this core still opens the usual way.
    ...(create ? {} : { create }),
  };
  const mod = await loadPackage(scheme.pkg, scheme.driver);
  const factory = mod[scheme.factory] as Factory | undefined;
  if (typeof factory !== 'function') {
    throw new CkptError(
      'UNSUPPORTED',
      `${scheme.pkg} does not export ${scheme.factory}(); update it to match @ckpt/core.`,
    );
  }
  const backend = await factory(factoryOptions);
  try {
    // A store that must exist is looked for now, so that a missing one fails here.
    if (!create) await backend.ready?.();
    return new CheckpointStore(backend, storeOptions);
  } catch (err) {
    await backend.close().catch(() => {});
    throw toCkptError(err, backend.name, backend.errorHint?.bind(backend));
  }
}
