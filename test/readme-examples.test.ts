/**
 * Every TypeScript example in the READMEs type-checks and runs, as written, against the real
 * backends, and prints what its comments say it prints. A block that is a signature or a template for the
 * reader's own package is marked, on the line before it, with `<!-- not run: why -->`.
 *
 * Each example is written next to its README (so that its imports resolve as they would in
 * that package), run in an empty working directory (so that `./agent.db` lands there) and
 * removed again. Its `console.log` calls are recorded: a call followed by a comment that reads
 * as a value (`// { step: 1 }`, `// [1]`) must print that value.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { connect } from 'node:net';
import { tmpdir } from 'node:os';
import { dirname, join, relative } from 'node:path';
import { fileURLToPath, pathToFileURL } from 'node:url';
import { format } from 'node:util';
import { openStore } from '@ckpt/core';
import { holdRunLock, SERVICES, serviceAvailable } from '@ckpt/test-servers';
import ts from 'typescript';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';

const root = fileURLToPath(new URL('..', import.meta.url));
/** The opening line of a TypeScript block. */
const TS_FENCE = /^```(ts|typescript)\s*$/m;
/** A call whose output is recorded; the calls of an example are numbered in source order. */
const CONSOLE_LOG = /console\.log\(/g;

interface Example {
  readme: string;
  line: number;
  code: string;
  /** Why it is not run, from its marker; undefined when it runs. */
  notRun: string | undefined;
}

function readmes(): string[] {
  const inside = (dir: string) =>
    readdirSync(join(root, dir), { withFileTypes: true })
      .filter((entry) => entry.isDirectory())
      .map((entry) => join(dir, entry.name, 'README.md'));
  return ['README.md', 'contract-tests/README.md', ...inside('packages'), ...inside('examples')]
    .map((path) => join(root, path))
    .filter((path) => existsSync(path));
}

function examplesOf(readme: string): Example[] {
  const lines = readFileSync(readme, 'utf8').split('\n');
  const found: Example[] = [];
  for (let i = 0; i < lines.length; i++) {
    if (!TS_FENCE.test(lines[i]!)) continue;
    const end = lines.indexOf('```', i + 1);
    const marker = /^<!-- not run: (.+) -->$/.exec(lines[i - 1] ?? '');
    found.push({
      readme,
      line: i + 1,
      code: lines.slice(i + 1, end).join('\n'),
      notRun: marker?.[1],
    });
    i = end;
  }
  return found;
}

interface Server {
  host: string;
  port: number;
  /** The URL the example opens, when it opens one (the cluster example passes a client). */
  url: string | undefined;
}

/** The server an example talks to, by the address it names, if any. */
function serverOf(code: string): Server | undefined {
  const url = /'((?:postgres|mysql|redis):\/\/[^']+)'/.exec(code)?.[1];
  if (url) {
    const { hostname, port, protocol } = new URL(url);
    // No port in the URL: the server's standard one, as in the tests' default URL for it.
    const service = SERVICES[protocol.slice(0, -1) as keyof typeof SERVICES];
    return { host: hostname, port: Number(port || new URL(service.url).port), url };
  }
  const node = /host: '([^']+)', port: (\d+)/.exec(code);
  return node ? { host: node[1]!, port: Number(node[2]), url: undefined } : undefined;
}

/** Whether something listens at the server's address. */
function listening({ host, port }: Server): Promise<void> {
  return new Promise((resolve, reject) => {
    const socket = connect({ host, port }, () => {
      socket.end();
      resolve();
    });
    socket.on('error', reject);
  });
}

/** What a `console.log` comment says is printed, when it reads as a value rather than prose. */
function expectedOutput(line: string): string | undefined {
  const comment = /console\.log\(.*\);\s*\/\/\s*(.+)$/.exec(line)?.[1];
  return comment && /^([[{'"\d-]|true|false|null|undefined)/.test(comment) ? comment : undefined;
}

// util.inspect breaks and pads its output by width; a comment is written by hand.
const squeeze = (text: string) => text.replace(/\s+/g, '');

type Log = (call: number, ...args: unknown[]) => void;
const LOG = '__readmeExampleLog';

/** Where an example is written for `purpose`: beside its README, under an ignored name. */
function fileFor(example: Example, purpose: string): string {
  const name = `.readme-example-${process.pid}-${purpose}-${example.line}.ts`;
  return join(dirname(example.readme), name);
}

/** The type errors of `examples`, checked with the workspace's compiler options. */
function typeErrors(examples: Example[]): string[] {
  const config = ts.getParsedCommandLineOfConfigFile(join(root, 'tsconfig.json'), undefined, {
    ...ts.sys,
    onUnRecoverableConfigFileDiagnostic: (d) => {
      throw new Error(ts.flattenDiagnosticMessageText(d.messageText, '\n'));
    },
  })!;
  const files = new Map(examples.map((e) => [fileFor(e, 'types'), e]));
  try {
    for (const [file, example] of files) writeFileSync(file, `${example.code}\nexport {};\n`);
    const program = ts.createProgram([...files.keys()], { ...config.options, noEmit: true });
    return ts
      .getPreEmitDiagnostics(program)
      .filter((d) => d.file && files.has(d.file.fileName))
      .map((d) => {
        const example = files.get(d.file!.fileName)!;
        const { line } = d.file!.getLineAndCharacterOfPosition(d.start ?? 0);
        const where = `${relative(root, example.readme)}:${example.line + 1 + line}`;
        return `${where}: ${ts.flattenDiagnosticMessageText(d.messageText, ' ')}`;
      });
  } finally {
    for (const file of files.keys()) rmSync(file, { force: true });
  }
}

/** Run one example, returning what each of its `console.log` calls printed, by call site. */
async function run(example: Example): Promise<Map<number, string[]>> {
  const printed = new Map<number, string[]>();
  (globalThis as Record<string, unknown>)[LOG] = ((call, ...args) => {
    printed.set(call, [...(printed.get(call) ?? []), format(...args)]);
  }) satisfies Log;
  let call = 0;
  const instrumented = example.code.replace(
    CONSOLE_LOG,
    () => `(globalThis as any).${LOG}(${call++}, `,
  );
  const file = fileFor(example, 'run');
  const cwd = process.cwd();
  const workdir = mkdtempSync(join(tmpdir(), 'ckpt-readme-'));
  writeFileSync(file, `${instrumented}\nexport {};\n`);
  try {
    process.chdir(workdir);
    await import(pathToFileURL(file).href);
  } finally {
    process.chdir(cwd);
    rmSync(file, { force: true });
    rmSync(workdir, { recursive: true, force: true });
    delete (globalThis as Record<string, unknown>)[LOG];
  }
  return printed;
}

const examples = readmes().flatMap(examplesOf);
const runnable = examples.filter((e) => e.notRun === undefined);
const cleanups: (() => Promise<void>)[] = [];
// The examples write to the servers' default namespaces, which every run shares: another run on
// this machine waits until this one has removed what its examples wrote.
let release = () => {};
beforeAll(async () => {
  release = await holdRunLock('readme-examples');
}, 30 * 60_000);
afterAll(async () => {
  try {
    for (const cleanup of cleanups) await cleanup();
  } finally {
    release();
  }
});

describe('README examples', () => {
  it('finds the examples of every README that has any', () => {
    const withExamples = new Set(examples.map((e) => relative(root, e.readme)));
    expect([...withExamples].sort()).toEqual(
      readmes()
        .filter((path) => TS_FENCE.test(readFileSync(path, 'utf8')))
        .map((path) => relative(root, path))
        .sort(),
    );
    expect(runnable.length).toBeGreaterThanOrEqual(10);
  });

  it('names in its npm install lines every package its examples import', () => {
    const missing: string[] = [];
    for (const readme of readmes()) {
      const text = readFileSync(readme, 'utf8');
      const installed = new Set(
        [...text.matchAll(/^npm install (.+)$/gm)].flatMap(([, words]) =>
          words!
            .replace(/#.*/, '')
            .split(/\s+/)
            .filter((word) => word && !word.startsWith('-'))
            // `ai@7` installs `ai`: a version after the name (not a scope's leading @).
            .map((word) => word.replace(/(?<=.)@.*$/, '')),
        ),
      );
      if (installed.size === 0) continue;
      const code = examples.filter((e) => e.readme === readme && e.notRun === undefined);
      for (const { code: source, line } of code) {
        for (const [, specifier] of source.matchAll(/from '([^'.][^']*)'/g)) {
          if (specifier!.startsWith('node:')) continue;
          const parts = specifier!.split('/');
          const pkg = parts.slice(0, specifier!.startsWith('@') ? 2 : 1).join('/');
          if (!installed.has(pkg)) missing.push(`${relative(root, readme)}:${line} imports ${pkg}`);
        }
      }
    }
    expect(missing).toEqual([]);
  });

  // A type-check of the workspace's programs: the heaviest test here, and slowest on a busy machine.
  it('type-checks every example that runs, as the workspace is type-checked', {
    timeout: 180_000,
  }, () => {
    expect(typeErrors(runnable)).toEqual([]);
  });

  for (const example of runnable) {
    const where = `${relative(root, example.readme)}:${example.line}`;
    const server = serverOf(example.code);
    const on = server ? ` (on ${server.host}:${server.port})` : '';
    it(`${where} runs and prints what it says${on}`, async (ctx) => {
      if (server) {
        const name = `the server at ${server.host}:${server.port}, for ${where}`;
        if (!(await serviceAvailable(name, () => listening(server)))) return ctx.skip();
        const { url } = server;
        if (url) cleanups.push(() => removeSessions(url, example.code));
      }
      const printed = await run(example);
      example.code.split('\n').reduce((call, line) => {
        const expected = expectedOutput(line);
        if (expected !== undefined) {
          expect(printed.get(call)?.map(squeeze), `${where}: ${line.trim()}`).toEqual([
            squeeze(expected),
          ]);
        }
        return call + (line.match(CONSOLE_LOG)?.length ?? 0);
      }, 0);
    });
  }
});

/**
 * The examples write to the servers' default namespaces, which no test uses: remove the
 * sessions they checkpointed, so that runs do not add up. (The cluster, which an example
 * reaches through its own client, keeps nothing on disk.)
 */
async function removeSessions(url: string, code: string): Promise<void> {
  const ids = [...code.matchAll(/\.checkpoint\(\s*'([^']+)'/g)].map((match) => match[1]!);
  if (ids.length === 0) return;
  const namespace = /namespace: '([a-z0-9_]+)'/.exec(code)?.[1] ?? 'ckpt';
  const store = await openStore(`${url}?namespace=${namespace}`);
  try {
    for (const id of ids) await store.delete(id);
  } finally {
    await store.close();
  }
}
