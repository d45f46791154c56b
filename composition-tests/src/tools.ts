/**
 * The `ckpt` command and its studio, run in this process on the stores under test: the
 * command through `main(argv, io)`, whose `open` hands it a store on the backend a URL names;
 * the studio's JSON API over HTTP on 127.0.0.1, as its page calls it.
 */
import { mkdtempSync, writeFileSync } from 'node:fs';
import { request } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '@ckpt/cli';
import { type CheckpointBackend, CheckpointStore } from '@ckpt/core';
// The studio is the command's own server, which the package does not export.
import { startStudio } from '../../packages/cli/src/studio/server.js';

/** A backend the command may close: closing it leaves the suite's open. */
function lent(backend: CheckpointBackend): CheckpointBackend {
  return new Proxy(backend, {
    get(target, property) {
      if (property === 'close') return async () => {};
      const value = Reflect.get(target, property, target);
      return typeof value === 'function' ? value.bind(target) : value;
    },
  });
}

function sink() {
  let text = '';
  const stream = new Writable({
    write(chunk, _encoding, done) {
      text += String(chunk);
      done();
    },
  });
  return { stream, text: () => text };
}

/**
 * Run `ckpt args` with `env` (keys, the store's URL); `backends` are the backends the URLs it
 * opens name. Resolves to what it printed; rejects with its error line unless it exits 0.
 */
export async function ckpt(
  args: string[],
  backends: Record<string, CheckpointBackend>,
  env: Record<string, string>,
): Promise<string> {
  const stdout = sink();
  const stderr = sink();
  const code = await main(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin: process.stdin,
    env,
    // The store is there already (or an empty one is): `create` is for opening by URL.
    open: async (url, { create: _, ...options }) =>
      new CheckpointStore(lent(backends[url]!), options),
  });
  if (code !== 0) throw new Error(`ckpt ${args.join(' ')} exited ${code}: ${stderr.text()}`);
  return stdout.text();
}

/** The studio serves only its API here: a page stands in for its built front end. */
let assetsDir: string | undefined;
function pageless(): string {
  if (assetsDir === undefined) {
    assetsDir = mkdtempSync(join(tmpdir(), 'ckpt-composition-studio-'));
    writeFileSync(join(assetsDir, 'index.html'), '<!doctype html><title>studio</title>');
  }
  return assetsDir;
}

/**
 * Start `ckpt studio --write` on `store`, send one change to its API as the studio's page sends
 * it (`POST path` with `body`), stop it; resolves to the JSON answer, rejects unless 200.
 */
export async function studioChange(
  store: CheckpointStore,
  path: string,
  body: unknown,
): Promise<unknown> {
  const studio = await startStudio({
    store,
    storeUrl: 'ckpt:studio',
    port: 0,
    write: true,
    assetsDir: pageless(),
  });
  try {
    const token = new URL(studio.url).searchParams.get('token')!;
    const answer = await new Promise<{ status: number; text: string }>((resolve, reject) => {
      const req = request(
        {
          host: '127.0.0.1',
          port: studio.port,
          method: 'POST',
          path,
          headers: {
            authorization: `Bearer ${token}`,
            'x-ckpt-studio': '1',
            origin: studio.origin,
            'content-type': 'application/json',
          },
        },
        (res) => {
          let text = '';
          res.on('data', (chunk) => {
            text += String(chunk);
          });
          res.on('end', () => resolve({ status: res.statusCode!, text }));
        },
      );
      req.on('error', reject);
      req.end(JSON.stringify(body));
    });
    if (answer.status !== 200)
      throw new Error(`studio POST ${path}: ${answer.status} ${answer.text}`);
    return JSON.parse(answer.text);
  } finally {
    await studio.close();
  }
}
