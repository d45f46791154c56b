/**
 * Server namespaces of one test run. A test names a namespace (`ai_sdk_chats`); on a server it
 * becomes that name with the run's id, so that two runs on the same servers at once (CI beside
 * someone's `pnpm test`) never see each other's sessions. The run's processes share the id
 * through the environment (the global setup sets it before any test process starts; a test's
 * own child processes inherit it), and each namespace made is written down, so that the
 * global teardown removes them all.
 */
import { createHash, randomBytes } from 'node:crypto';
import { appendFileSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

const RUN_VARIABLE = 'CKPT_TEST_RUN';
/** The longest namespace a backend takes (`^[a-z][a-z0-9_]{0,30}$`). */
const MAX_NAMESPACE = 31;

/** What this process has written down already. */
const written = new Set<string>();

/** Give this process and those it starts a run id, unless a run already gave one. */
export function startTestRun(): void {
  process.env[RUN_VARIABLE] ??= randomBytes(4).readUInt32BE().toString(36).slice(0, 5);
}

function runId(): string {
  const id = process.env[RUN_VARIABLE];
  if (id === undefined) {
    throw new Error(`${RUN_VARIABLE} is not set: the tests run under vitest's global setup`);
  }
  return id;
}

/** Where this run writes down the namespaces it made. */
function registry(): string {
  return join(tmpdir(), `ckpt-test-run-${runId()}.namespaces`);
}

/**
 * `namespace` for this run, on the server `backend` names (written down for the teardown): the
 * name and the run id, the name cut and a hash of it put in where the two would be too long.
 */
export function runNamespace(backend: string, namespace: string): string {
  const suffix = `_${runId()}`;
  const room = MAX_NAMESPACE - suffix.length;
  const name =
    namespace.length <= room
      ? namespace
      : `${namespace.slice(0, room - 7)}_${createHash('sha256').update(namespace).digest('hex').slice(0, 6)}`;
  const made = `${name}${suffix}`;
  const line = `${JSON.stringify([backend, made])}\n`;
  // Stores are opened thousands of times a run, on a few dozen namespaces: each written once.
  if (!written.has(line)) {
    appendFileSync(registry(), line);
    written.add(line);
  }
  return made;
}

/** The namespaces this run made on each server, each once. */
export function runNamespaces(): [backend: string, namespace: string][] {
  let text = '';
  try {
    text = readFileSync(registry(), 'utf8');
  } catch {
    return [];
  }
  const seen = new Set(text.split('\n').filter((line) => line !== ''));
  return [...seen].map((line) => JSON.parse(line) as [string, string]);
}

/** Forget the namespaces written down (once they are removed). */
export function forgetRunNamespaces(): void {
  rmSync(registry(), { force: true });
  written.clear();
}
