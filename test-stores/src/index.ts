/**
 * Every ckpt backend the integration packages are proven on, each as a store that a test file
 * opens in a namespace and empties between cases: memory, SQLite, PGlite, PostgreSQL, MariaDB,
 * Redis (a single server and a cluster), and kvBackend over a five-method KV and over a
 * get/set/delete-only KV.
 */

import { createHash } from 'node:crypto';
import {
  type CheckpointBackend,
  CheckpointStore,
  compress,
  encrypt,
  type KvStore,
  kvBackend,
} from '@ckpt/core';
import { memory, memoryKv } from '@ckpt/memory';
import { mysql } from '@ckpt/mysql';
import { pglite } from '@ckpt/pglite';
import { postgres } from '@ckpt/postgres';
import { redis } from '@ckpt/redis';
import { sqlite } from '@ckpt/sqlite';
import { serviceAvailable, serviceUrl } from '@ckpt/test-servers';
import { PGlite } from '@electric-sql/pglite';
import { Cluster, Redis } from 'ioredis';
import mysql2 from 'mysql2/promise';
import pg from 'pg';
import { forgetRunNamespaces, runNamespace, runNamespaces } from './run-namespaces.js';

export { startTestRun } from './run-namespaces.js';
export { withoutTags } from './without-tags.js';

/** A backend under test: how to open its store, and what to close after. */
export interface StoreUnderTest {
  name: string;
  /** Whether it is a server's: a new namespace there costs its migrations, so tests empty one. */
  server: boolean;
  /** Whether its data outlives the process (a file or a server), so a test can restart one. */
  outlivesProcess: boolean;
  /** Whether it is correct for one writer per session at a time only (a KV without compareAndSet). */
  singleWriter?: boolean;
  /** A store in `namespace`; the same namespace gives the same data. */
  open(namespace: string, dir: string): Promise<{ store: CheckpointStore; close(): Promise<void> }>;
}

const postgresUrl = serviceUrl('postgres');
const mysqlUrl = serviceUrl('mysql');
const redisUrl = serviceUrl('redis');
const clusterUrl = process.env.CKPT_TEST_REDIS_CLUSTER_URL || 'redis://127.0.0.1:7000';

const quiet = (client: Redis | Cluster) => {
  client.on('error', () => {});
  return client;
};

const postgresUp = await serviceAvailable(`PostgreSQL at ${postgresUrl}`, async () => {
  const client = new pg.Client({ connectionString: postgresUrl, connectionTimeoutMillis: 3000 });
  await client.connect();
  await client.end();
});
const mysqlUp = await serviceAvailable(`MySQL/MariaDB at ${mysqlUrl}`, async () => {
  const conn = await mysql2.createConnection({ uri: mysqlUrl, connectTimeout: 3000 });
  await conn.end();
});
// A probe's client is disconnected whatever happens: one that failed to connect would go on
// trying, and keep a process that imports this module (a test's worker) from ever exiting.
const redisUp = await serviceAvailable(`Redis at ${redisUrl}`, async () => {
  const client = quiet(new Redis(redisUrl, { lazyConnect: true, maxRetriesPerRequest: 0 }));
  try {
    await client.connect();
  } finally {
    client.disconnect();
  }
});
const clusterUp = await serviceAvailable(
  `Redis Cluster at ${clusterUrl} (scripts/start-redis-cluster.sh)`,
  async () => {
    const client = quiet(new Redis(clusterUrl, { lazyConnect: true, maxRetriesPerRequest: 0 }));
    try {
      await client.connect();
      const info = String(await client.cluster('INFO'));
      if (!info.includes('cluster_state:ok')) throw new Error('cluster_state is not ok');
    } finally {
      client.disconnect();
    }
  },
);

/** A KV with only the three required methods: one writer per session at a time. */
function getSetDeleteKv(all: KvStore): KvStore {
  return { get: all.get, set: all.set, delete: all.delete };
}

// The in-process stores keep their data per namespace, so that a store opened again in the
// same namespace (a process "restarting") sees what the last one wrote.
const kept = new Map<string, CheckpointStore>();
const inProcess = (name: string, make: () => CheckpointStore): StoreUnderTest => ({
  name,
  server: false,
  outlivesProcess: false,
  async open(namespace) {
    const key = `${name}/${namespace}`;
    let store = kept.get(key);
    if (store === undefined) {
      store = make();
      kept.set(key, store);
    }
    return { store, close: async () => {} };
  },
});

/**
 * PGlite, one database a process, started at its first use (it takes seconds); each namespace
 * is a schema in it, whose data every store opened on it in this process sees.
 */
let pgliteDb: PGlite | undefined;
const pgliteStore: StoreUnderTest = {
  name: 'pglite',
  server: false,
  outlivesProcess: false,
  async open(namespace) {
    pgliteDb ??= new PGlite();
    return plainStore(pglite({ db: pgliteDb, namespace }));
  },
};

const seed = new URL(clusterUrl);

/** A store on a server in a namespace of its own name (not this run's: see serverStore). */
type ServerOpen = (namespace: string) => { store: CheckpointStore; close(): Promise<void> };

/** How each server's stores are opened, by the server's name in STORES. */
const serverOpens = new Map<string, ServerOpen>();

/**
 * A server's store, in the list only when the server answers. Each namespace a test names is
 * this run's (see run-namespaces.ts), so that runs beside each other never share one.
 */
function serverStore(up: boolean, name: string, open: ServerOpen): StoreUnderTest[] {
  if (!up) return [];
  serverOpens.set(name, open);
  return [
    {
      name,
      server: true,
      outlivesProcess: true,
      async open(namespace) {
        return open(runNamespace(name, namespace));
      },
    },
  ];
}

/** A plain store of `backend`, closed with the store. */
const plainStore = (backend: CheckpointBackend) => {
  const store = new CheckpointStore(backend);
  return { store, close: () => store.close() };
};

/** Remove every server namespace this run made (the global teardown). */
export async function removeRunNamespaces(): Promise<void> {
  for (const [server, namespace] of runNamespaces()) {
    const open = serverOpens.get(server);
    if (open === undefined) continue;
    const { store, close } = open(namespace);
    try {
      await store.destroy();
    } catch (err) {
      console.warn(`could not remove ${server} namespace ${namespace}: ${String(err)}`);
    }
    await close().catch(() => {});
  }
  forgetRunNamespaces();
}

/** A backend that `openStore` reaches by URL, such as the `ckpt` command takes. */
export interface UrlStore {
  name: string;
  /** The URL of the store in `namespace` (a SQLite file in `dir`). */
  url(namespace: string, dir: string): string;
}

const withNamespace = (url: string, namespace: string) =>
  `${url}${url.includes('?') ? '&' : '?'}namespace=${namespace}`;

/** A server reachable by URL, in the list only when it answers; its namespaces are this run's. */
const urlServer = (up: boolean, name: string, url: string): UrlStore[] =>
  up ? [{ name, url: (namespace) => withNamespace(url, runNamespace(name, namespace)) }] : [];

/** The backends reachable by URL; servers that cannot be reached are left out, loudly. */
export const URL_STORES: UrlStore[] = [
  { name: 'sqlite', url: (namespace, dir) => `sqlite:${dir}/${namespace}.db` },
  ...urlServer(postgresUp, 'postgres', postgresUrl),
  ...urlServer(mysqlUp, 'mariadb', mysqlUrl),
  ...urlServer(redisUp, 'redis', redisUrl),
];

/** The stores the saver's tests run on. Servers that cannot be reached are left out, loudly. */
export const STORES: StoreUnderTest[] = [
  inProcess('memory', () => new CheckpointStore(memory())),
  {
    name: 'sqlite',
    server: false,
    outlivesProcess: true,
    async open(namespace, dir) {
      const store = new CheckpointStore(sqlite({ path: `${dir}/${namespace}.db` }));
      return { store, close: () => store.close() };
    },
  },
  pgliteStore,
  ...serverStore(postgresUp, 'postgres', (namespace) =>
    plainStore(postgres({ url: postgresUrl, namespace })),
  ),
  ...serverStore(mysqlUp, 'mariadb', (namespace) =>
    plainStore(mysql({ url: mysqlUrl, namespace })),
  ),
  ...serverStore(redisUp, 'redis', (namespace) => plainStore(redis({ url: redisUrl, namespace }))),
  ...serverStore(clusterUp, 'redis cluster', (namespace) => {
    // The options @ckpt/redis's README gives a Cluster of one's own.
    const client = new Cluster([{ host: seed.hostname, port: Number(seed.port) }], {
      retryDelayOnFailover: 0,
      redisOptions: { autoResendUnfulfilledCommands: false, maxRetriesPerRequest: 0 },
    });
    const store = new CheckpointStore(redis({ client, namespace }));
    return {
      store,
      close: async () => {
        await store.close();
        await client.quit();
      },
    };
  }),
  inProcess('kvBackend (five-method KV)', () => new CheckpointStore(kvBackend(memoryKv()))),
  {
    ...inProcess(
      'kvBackend (get/set/delete KV)',
      () => new CheckpointStore(kvBackend(getSetDeleteKv(memoryKv()))),
    ),
    singleWriter: true,
  },
];

/** The key the sealed stores encrypt under: fixed, so that a test can look for it in output. */
export const SEALING_KEY = createHash('sha256').update('ckpt test-stores sealing key').digest();

/** A store of `of` whose every value above 64 bytes is compressed, and every value encrypted. */
function sealed(of: StoreUnderTest): StoreUnderTest {
  return {
    ...of,
    name: `${of.name}, compressed and encrypted`,
    async open(namespace, dir) {
      // A namespace of its own, so that it never shares data with the plain store's runs.
      const handle = await of.open(`${namespace}_sealed`, dir);
      const codecs = [
        compress('gzip', { minBytes: 64 }),
        encrypt({ keys: { test: SEALING_KEY }, current: 'test' }),
      ];
      return { store: new CheckpointStore(handle.store.backend, { codecs }), close: handle.close };
    },
  };
}

/**
 * The integrations' stores with codecs on: in process, in a file and on a server (PostgreSQL,
 * when it answers), every value compressed where that pays and encrypted.
 */
export const SEALED_STORES: StoreUnderTest[] = STORES.filter((s) =>
  ['memory', 'sqlite', 'postgres'].includes(s.name),
).map(sealed);

/**
 * The stores a test file opens on `backend` in `namespace`: each `open()` a new one on the
 * same data (as a restarted process would). `closeOpened()` closes those opened so far, for
 * `afterEach`: a server store holds a pool of connections until it is closed, and the stores
 * of every test in a file, held to its end, can take more connections than a server allows
 * once two test runs share it. `closeAll()` first empties a server's namespace of the
 * sessions and the state `scopes` the tests wrote, then closes them all.
 */
export function storesOn(
  backend: StoreUnderTest,
  namespace: string,
  dir: string,
  scopes: string[],
) {
  const opened: { close(): Promise<void> }[] = [];
  const open = async () => {
    const handle = await backend.open(namespace, dir);
    opened.push(handle);
    return handle.store;
  };
  const closeOpened = async () => {
    for (const handle of opened.splice(0)) await handle.close();
  };
  return {
    open,
    closeOpened,
    async closeAll() {
      if (backend.server) await emptyStore(await open(), scopes);
      await closeOpened();
    },
  };
}

/** Remove every session and state key of `store`, so that the next test starts empty. */
export async function emptyStore(store: CheckpointStore, scopes: string[]): Promise<void> {
  const caps = store.capabilities;
  if (caps.listSessions) {
    const ids: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await store.sessions({ limit: 1000, cursor });
      ids.push(...page.items.map((s) => s.sessionId));
      cursor = page.cursor;
    } while (cursor !== null);
    for (const id of ids) await store.delete(id);
  }
  if (caps.listStateKeys) {
    for (const scope of scopes) {
      const keys: string[] = [];
      let cursor: string | null = null;
      do {
        const page = await store.state(scope).keys({ limit: 1000, cursor });
        keys.push(...page.items);
        cursor = page.cursor;
      } while (cursor !== null);
      for (const key of keys) await store.state(scope).delete(key);
    }
  }
}

/** The store under test named `name`, with codecs or without, or undefined. */
export function storeNamed(name: string): StoreUnderTest | undefined {
  return [...STORES, ...SEALED_STORES].find((b) => b.name === name);
}

/**
 * In a test's child process started with `<backend> <namespace> <dir> …rest` (see worker.ts):
 * the store of that backend in that namespace, and the remaining arguments.
 */
export async function storeFromArgs(
  args: string[],
): Promise<{ store: CheckpointStore; close(): Promise<void>; rest: string[] }> {
  const [name, namespace, dir, ...rest] = args;
  const backend = name === undefined ? undefined : storeNamed(name);
  if (!backend || namespace === undefined || dir === undefined) {
    throw new Error(`expected <backend> <namespace> <dir> …, got ${JSON.stringify(args)}`);
  }
  const handle = await backend.open(namespace, dir);
  return { ...handle, rest };
}
