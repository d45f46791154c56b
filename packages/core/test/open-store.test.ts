import { mkdirSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { describe, expect, it } from 'vitest';
import { CheckpointStore, isCkptError, openStore } from '../src/index.js';
import {
  isMissingPackage,
  loadPackage,
  missingAdapter,
  missingPackageOf,
} from '../src/tools/adapter-loading.js';

async function refusal(promise: Promise<unknown>) {
  const err = await promise.then(
    () => undefined,
    (e: unknown) => e,
  );
  expect(isCkptError(err)).toBe(true);
  return err as Error & { code: string; details: Record<string, unknown> };
}

/**
 * Install a stand-in adapter, `@ckpt-test/adapter`, in `app`'s node_modules: an ES module
 * package with an adapter's exports map, made of `files` (`dist/index.js`, and
 * `dist/index.cjs` for its CommonJS entry).
 */
function writeAdapter(app: string, files: Record<string, string>): void {
  const pkg = join(app, 'node_modules', '@ckpt-test', 'adapter');
  mkdirSync(join(pkg, 'dist'), { recursive: true });
  writeFileSync(
    join(pkg, 'package.json'),
    JSON.stringify({
      name: '@ckpt-test/adapter',
      type: 'module',
      exports: {
        '.': {
          import: { default: './dist/index.js' },
          require: { default: './dist/index.cjs' },
        },
        './package.json': './package.json',
      },
    }),
  );
  for (const [path, text] of Object.entries(files)) writeFileSync(join(pkg, path), text);
}

describe('openStore', () => {
  it('opens a memory store', async () => {
    const store = await openStore('memory:');
    expect(store).toBeInstanceOf(CheckpointStore);
    await store.checkpoint('s', { ok: true });
    expect((await store.load('s'))?.data).toEqual({ ok: true });
    await store.close();
  });

  it('passes the namespace query parameter to the backend', async () => {
    const store = await openStore('memory:?namespace=agents_2');
    expect((store.backend as unknown as { namespace: string }).namespace).toBe('agents_2');
  });

  it('refuses an invalid namespace', async () => {
    const err = await refusal(openStore('memory:?namespace=Bad-Name'));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toMatch(/namespace/);
  });

  it('refuses a parameter the memory or sqlite backend does not take, naming those it does', async () => {
    const memory = await refusal(openStore('memory:?namespace=a&size=10'));
    expect(memory.code).toBe('INVALID_ARGUMENT');
    expect(memory.message).toBe(
      'openStore: memory URLs take no parameter "size"; they take namespace.',
    );
    const sqlite = await refusal(openStore('sqlite:./agent.db?mode=ro'));
    expect(sqlite.message).toMatch(/no parameter "mode"; they take namespace, synchronous/);
  });

  it('refuses a namespace or backend parameter given twice, rather than picking one', async () => {
    for (const url of [
      'memory:?namespace=a&namespace=b',
      'sqlite::memory:?synchronous=off&synchronous=full',
      'postgres://u@127.0.0.1/db?namespace=a&namespace=b',
    ]) {
      const err = await refusal(openStore(url));
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(/gives "(namespace|synchronous)" more than once; give it once/);
    }
  });

  it("refuses 'sqlite://…', which names a host to some readers and the root to others", async () => {
    for (const url of ['sqlite://./agent.db', 'sqlite:///var/lib/agent.db']) {
      const err = await refusal(openStore(url));
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toMatch(/'sqlite:\.\/agent\.db'.*'sqlite:\/var\/lib\/agent\.db'/);
    }
  });

  it('refuses an unknown scheme, listing the known ones, without echoing a password', async () => {
    const err = await refusal(openStore('mongodb://user:topsecret@host/db'));
    expect(err.code).toBe('INVALID_ARGUMENT');
    expect(err.message).toMatch(/memory:, sqlite:/);
    expect(err.message).not.toContain('topsecret');
  });

  it('suggests sqlite: for a file path given without a scheme, and asks for a URL when empty', async () => {
    for (const path of ['agent.db', './data/agent.db', 'C:\\data\\agent.db']) {
      const err = await refusal(openStore(path));
      expect(err.code).toBe('INVALID_ARGUMENT');
      expect(err.message).toBe(
        `openStore: ${JSON.stringify(path)} has no URL scheme; for a SQLite file write ${JSON.stringify(`sqlite:${path}`)}, else start it with one of memory:, sqlite:, pglite:, redis:, rediss:, postgres:, postgresql:, mysql:.`,
      );
    }
    const empty = await refusal(openStore(''));
    expect(empty.message).toBe(
      'openStore(url) needs a URL, such as "sqlite:./agent.db"; got an empty string.',
    );
  });

  it('names the package to install when a backend package is missing', () => {
    // Every adapter is installed in this workspace, so the check is given the error Node
    // raises for a package that is not installed.
    const notInstalled = Object.assign(
      new Error("Cannot find package '@ckpt/mysql' imported from x"),
      {
        code: 'ERR_MODULE_NOT_FOUND',
      },
    );
    expect(isMissingPackage(notInstalled, '@ckpt/mysql')).toBe(true);
    // A package that is there but misses one of its own imports is not reported as missing.
    expect(
      isMissingPackage(
        Object.assign(new Error("Cannot find package 'mysql2'"), { code: 'ERR_MODULE_NOT_FOUND' }),
        '@ckpt/mysql',
      ),
    ).toBe(false);
    expect(isMissingPackage(new Error('boom'), '@ckpt/mysql')).toBe(false);
    const err = missingAdapter('@ckpt/mysql', 'mysql2', notInstalled);
    expect(isCkptError(err, 'UNSUPPORTED')).toBe(true);
    expect(err.message).toContain('npm install @ckpt/mysql mysql2');
    expect(err.cause).toBe(notInstalled);
  });

  it("finds an adapter core cannot see in the application's directory, by its ES module entry", async () => {
    const app = mkdtempSync(join(tmpdir(), 'ckpt-app-'));
    try {
      writeAdapter(app, {
        'dist/index.js': "export const loadedAs = 'esm';\n",
        'dist/index.cjs': "exports.loadedAs = 'cjs';\n",
      });
      const mod = await loadPackage('@ckpt-test/adapter', null, [join(app, 'elsewhere'), app]);
      expect(mod.loadedAs).toBe('esm');
      // Found in neither place: the error says what to install.
      const err = await refusal(loadPackage('@ckpt-test/missing', 'driver', [app]));
      expect(err.code).toBe('UNSUPPORTED');
      expect(err.message).toContain('npm install @ckpt-test/missing driver');
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('names the driver to install when the adapter is installed without it', async () => {
    const app = mkdtempSync(join(tmpdir(), 'ckpt-app-'));
    try {
      // An adapter that imports a driver the application has not installed.
      writeAdapter(app, {
        'dist/index.js': "import driver from 'ckpt-test-driver';\nexport const loaded = driver;\n",
      });
      const err = await refusal(loadPackage('@ckpt-test/adapter', 'ckpt-test-driver', [app]));
      expect(isCkptError(err, 'UNSUPPORTED')).toBe(true);
      expect(err.message).toBe(
        'openStore found @ckpt-test/adapter, but not the ckpt-test-driver package it uses to reach the server; install it: npm install ckpt-test-driver',
      );
      expect(err.details).toEqual({ package: 'ckpt-test-driver' });
    } finally {
      rmSync(app, { recursive: true, force: true });
    }
  });

  it('tells which package Node reports missing, from ES modules and from CommonJS alike', () => {
    const notFound = (code: string, message: string) => Object.assign(new Error(message), { code });
    const esm = notFound(
      'ERR_MODULE_NOT_FOUND',
      "Cannot find package 'pg' imported from /app/node_modules/@ckpt/postgres/dist/index.js",
    );
    const cjs = notFound(
      'MODULE_NOT_FOUND',
      "Cannot find module 'mysql2/promise'\nRequire stack:\n- /app/node_modules/@ckpt/mysql/dist/index.cjs",
    );
    expect(missingPackageOf(esm)).toBe('pg');
    expect(missingPackageOf(cjs)).toBe('mysql2');
    // The adapter is named in the path of the importer, but the driver is what is missing.
    expect(isMissingPackage(esm, '@ckpt/postgres')).toBe(false);
    expect(
      missingPackageOf(notFound('ERR_MODULE_NOT_FOUND', "Cannot find package '@ckpt/redis/x'")),
    ).toBe('@ckpt/redis');
    // A missing file of a package that is there is no package to install.
    expect(
      missingPackageOf(notFound('ERR_MODULE_NOT_FOUND', "Cannot find module '/app/x.js'")),
    ).toBeUndefined();
    expect(missingPackageOf(new Error("Cannot find package 'pg'"))).toBeUndefined();
  });

  it('applies store options', async () => {
    const store = await openStore('memory:', { maxPayloadBytes: 10 });
    const err = await refusal(store.checkpoint('s', 'x'.repeat(20)));
    expect(err.code).toBe('PAYLOAD_TOO_LARGE');
  });
});
