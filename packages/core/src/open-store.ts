/** `openStore(url)`: pick and load a backend package from a connection string. */
import type { CheckpointBackend } from './backend.js';
import { CkptError, invalidArgument, redactPasswords } from './errors.js';
import { checkNamespace } from './namespace.js';
import { CheckpointStore } from './store.js';
import type { StoreOptions } from './types.js';

type Factory = (options: Record<string, unknown>) => CheckpointBackend | Promise<CheckpointBackend>;

interface Scheme {
  /** The adapter package and its driver, named in the error when they are not installed. */
  pkg: string;
  driver: string | null;
  factory: string;
  /** The adapter's options for this URL (namespace added by the caller). */
  options(url: string, rest: string): Record<string, unknown>;
}

const SCHEMES: Record<string, Scheme> = {
  'memory:': { pkg: '@ckpt/memory', driver: null, factory: 'memory', options: () => ({}) },
  'sqlite:': {
    pkg: '@ckpt/sqlite',
    driver: 'better-sqlite3',
    factory: 'sqlite',
    options: (_url, rest) => ({ path: rest }),
  },
  'redis:': {
    pkg: '@ckpt/redis',
    driver: 'ioredis',
    factory: 'redis',
    options: (url) => ({ url }),
  },
  'rediss:': {
    pkg: '@ckpt/redis',
    driver: 'ioredis',
    factory: 'redis',
    options: (url) => ({ url }),
  },
  'postgres:': {
    pkg: '@ckpt/postgres',
    driver: 'pg',
    factory: 'postgres',
    options: (url) => ({ url }),
  },
  'postgresql:': {
    pkg: '@ckpt/postgres',
    driver: 'pg',
    factory: 'postgres',
    options: (url) => ({ url }),
  },
  'mysql:': { pkg: '@ckpt/mysql', driver: 'mysql2', factory: 'mysql', options: (url) => ({ url }) },
};

/** Split off a `?namespace=` parameter, leaving the rest of the URL for the driver. */
function takeNamespace(url: string): { url: string; namespace: string | undefined } {
  const q = url.indexOf('?');
  if (q === -1) return { url, namespace: undefined };
  const params = new URLSearchParams(url.slice(q + 1));
  const namespace = params.get('namespace') ?? undefined;
  params.delete('namespace');
  const rest = params.toString();
  return { url: url.slice(0, q) + (rest ? `?${rest}` : ''), namespace };
}

/**
 * Open a store from a URL: `memory:`, `sqlite:./agent.db`, `sqlite::memory:`, `redis://…`,
 * `postgres://…`, `mysql://…`, with an optional `?namespace=`. Loads `@ckpt/<backend>` on demand.
 */
export async function openStore(url: string, options?: StoreOptions): Promise<CheckpointStore> {
  if (typeof url !== 'string') {
    throw invalidArgument(
      'url',
      'openStore(url) needs a string such as "memory:" or "sqlite:./agent.db".',
    );
  }
  const colon = url.indexOf(':');
  const scheme = SCHEMES[url.slice(0, colon + 1).toLowerCase()];
  if (colon < 1 || scheme === undefined) {
    throw invalidArgument(
      'url',
      `openStore: unknown URL scheme in ${JSON.stringify(redactPasswords(url))}; use one of ${Object.keys(SCHEMES).join(', ')}.`,
    );
  }
  const { url: plain, namespace } = takeNamespace(url);
  const factoryOptions = {
    ...scheme.options(plain, plain.slice(colon + 1)),
    namespace: checkNamespace(namespace),
  };
  const mod = await loadAdapter(scheme);
  const factory = mod[scheme.factory] as Factory | undefined;
  if (typeof factory !== 'function') {
    throw new CkptError(
      'UNSUPPORTED',
      `${scheme.pkg} does not export ${scheme.factory}(); update it to match @ckpt/core.`,
    );
  }
  return new CheckpointStore(await factory(factoryOptions), options);
}

async function loadAdapter(scheme: Scheme): Promise<Record<string, unknown>> {
  try {
    return (await import(scheme.pkg)) as Record<string, unknown>;
  } catch (err) {
    throw isMissingPackage(err, scheme.pkg) ? missingAdapter(scheme.pkg, scheme.driver, err) : err;
  }
}

/** Whether `err` is Node's report that `pkg` itself (not something it imports) is not installed. */
export function isMissingPackage(err: unknown, pkg: string): boolean {
  const code = (err as { code?: string } | null)?.code;
  return (
    (code === 'ERR_MODULE_NOT_FOUND' || code === 'MODULE_NOT_FOUND') &&
    String((err as Error).message).includes(pkg)
  );
}

/** The error that tells the user which packages to install for a URL scheme. */
export function missingAdapter(pkg: string, driver: string | null, cause?: unknown): CkptError {
  const install = [pkg, driver].filter(Boolean).join(' ');
  return new CkptError(
    'UNSUPPORTED',
    `openStore needs the ${pkg} package for this URL; install it: npm install ${install}`,
    { cause, details: { package: pkg } },
  );
}
