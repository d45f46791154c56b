/**
 * The command run in-process (`main`) on memory stores, where a test decides what a URL opens
 * and when Ctrl-C comes: a copy stopped in the middle, and hints that show no password.
 */
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Writable } from 'node:stream';
import { main } from '@ckpt/cli';
import { type CheckpointBackend, CheckpointStore } from '@ckpt/core';
import { memory } from '@ckpt/memory';
import { expect, it } from 'vitest';
import { lent, lentAround } from './support/lent-store.js';

/** A sink that keeps what is written to it. */
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
 * Run `ckpt` with `stores` for the URLs it opens; `interrupt` is set to what Ctrl-C calls while
 * the command listens for it.
 */
async function ckpt(args: string[], stores: Record<string, CheckpointStore>, store?: string) {
  const stdout = sink();
  const stderr = sink();
  const listening: (() => void)[] = [];
  const code = await main(args, {
    stdout: stdout.stream,
    stderr: stderr.stream,
    stdin: process.stdin,
    env: store === undefined ? {} : { CKPT_STORE: store },
    open: async (url) => lent(stores[url]!),
    onInterrupt(listener) {
      listening.push(listener);
      return () => listening.splice(listening.indexOf(listener), 1);
    },
  });
  return { code, stdout: stdout.text(), stderr: stderr.text(), listening };
}

/** A store whose backend calls `after` once each session is imported. */
function importing(after: (n: number) => void): CheckpointStore {
  const backend = memory();
  let n = 0;
  return new CheckpointStore(
    new Proxy(backend, {
      get(target, property) {
        const value = Reflect.get(target, property, target);
        if (property !== 'importSession') {
          return typeof value === 'function' ? value.bind(target) : value;
        }
        return async (...args: unknown[]) => {
          const outcome = await (value as CheckpointBackend['importSession']).apply(
            target,
            args as Parameters<CheckpointBackend['importSession']>,
          );
          after(++n);
          return outcome;
        };
      },
    }),
  );
}

it('stops a copy on Ctrl-C, every session whole or absent, says how to go on, and exits 130', async () => {
  const source = new CheckpointStore(memory());
  for (let i = 0; i < 20; i++) await source.checkpoint(`s-${i}`, { i }, { transcript: [i] });
  await source.state('prefs').set('theme', 'dark');
  let ctrlC: (() => void) | undefined;
  const target = importing((n) => {
    if (n === 3) ctrlC?.();
  });
  const stores = { 'memory:from': source, 'memory:to': target };
  const stdout = sink();
  const stderr = sink();
  const code = await main(
    ['copy', '--from', 'memory:from', '--to', 'memory:to', '--concurrency', '2'],
    {
      stdout: stdout.stream,
      stderr: stderr.stream,
      stdin: process.stdin,
      env: {},
      open: async (url) => lent(stores[url as keyof typeof stores]),
      onInterrupt(listener) {
        ctrlC = listener;
        return () => {
          ctrlC = undefined;
        };
      },
    },
  );
  expect(code).toBe(130);
  expect(stdout.text()).toBe('');
  expect(stderr.text()).toMatch(
    /^stopping after the sessions being written; Ctrl-C again to quit at once\nckpt: interrupted: stopped after [34] sessions \([34] copied\); every session in the target is whole or absent\. To take up where it stopped, run: ckpt copy --from memory:from --to memory:to --if-exists skip --concurrency 2\n$/,
  );
  // The sessions in flight finished; none began after Ctrl-C, and no state was copied.
  const copied = (await target.sessions({ limit: 100 })).items;
  expect(copied.length).toBeLessThanOrEqual(4);
  for (const s of copied) {
    expect(await target.transcript(s.sessionId)).toEqual(await source.transcript(s.sessionId));
  }
  expect(await target.state('prefs').get('theme')).toBeUndefined();
  // No one listens for Ctrl-C any more: a second one does what it does by default.
  expect(ctrlC).toBeUndefined();

  const rest = await ckpt(
    ['copy', '--from', 'memory:from', '--to', 'memory:to', '--if-exists', 'skip', '--json'],
    stores,
  );
  expect(rest.code).toBe(0);
  expect(JSON.parse(rest.stdout)).toEqual({
    sessions: 20 - copied.length,
    checkpoints: 20 - copied.length,
    state: 1,
    skipped: copied.length,
  });
  expect(rest.listening).toEqual([]);
});

it('repeats the store in a hint without its password', async () => {
  const store = new CheckpointStore(memory());
  for (const id of ['a', 'b']) await store.checkpoint(id, 1);
  const url = 'postgres://app:s3cret@db.internal:5432/agents';
  const run = await ckpt(['--store', url, 'sessions', '--limit', '1'], { [url]: store });
  expect(run.stderr).toMatch(
    /^more: ckpt --store postgres:\/\/app:\*\*\*@db\.internal:5432\/agents sessions --limit 1 --cursor \S+\n$/,
  );
});

it('leaves no file behind when an export to --out fails halfway, and keeps one already there', async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ckpt-export-'));
  try {
    const store = new CheckpointStore(memory());
    for (let i = 0; i < 5; i++) await store.checkpoint(`s-${i}`, { i });
    let reads = 0;
    const failing = lentAround(store, 'exportCheckpoints', (call) => {
      if (++reads === 3) throw new Error('the server went away');
      return call();
    });
    const fresh = join(dir, 'fresh.jsonl');
    const kept = join(dir, 'kept.jsonl');
    writeFileSync(kept, 'an earlier export\n');
    for (const out of [fresh, kept]) {
      reads = 0;
      const run = await ckpt(['export', '--out', out], { 'memory:x': failing }, 'memory:x');
      expect(run.code).toBe(6);
      expect(run.stderr).toContain('the server went away');
    }
    expect(existsSync(fresh)).toBe(false);
    expect(readFileSync(kept, 'utf8')).toBe('an earlier export\n');
    expect(readdirSync(dir)).toEqual(['kept.jsonl']);

    const whole = await ckpt(['export', '--out', fresh], { 'memory:x': lent(store) }, 'memory:x');
    expect(whole.code).toBe(0);
    expect(readFileSync(fresh, 'utf8').trim().split('\n')).toHaveLength(12);
    expect(readdirSync(dir).sort()).toEqual(['fresh.jsonl', 'kept.jsonl']);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
});

it('prints sessions --all a page at a time as it reads them, the same as one page would be', async () => {
  const store = new CheckpointStore(memory());
  for (let i = 0; i < 2500; i++) await store.checkpoint(`s-${String(i).padStart(4, '0')}`, { i });
  const expected = [];
  for (let cursor: string | null = null; ; ) {
    const page = await store.sessions({ limit: 1000, cursor });
    expected.push(...page.items);
    cursor = page.cursor;
    if (cursor === null) break;
  }
  for (const asJson of [false, true]) {
    let pagesRead = 0;
    const counting = lentAround(store, 'sessions', (call) => {
      pagesRead++;
      return call();
    });
    // What had been read of the store when each piece of output was written.
    const writes: { pagesRead: number; text: string }[] = [];
    const stdout = new Writable({
      write(chunk, _encoding, done) {
        writes.push({ pagesRead, text: String(chunk) });
        done();
      },
    });
    const code = await main(['sessions', '--all', ...(asJson ? ['--json'] : [])], {
      stdout,
      stderr: sink().stream,
      stdin: process.stdin,
      env: { CKPT_STORE: 'memory:x' },
      open: async () => counting,
    });
    expect(code).toBe(0);
    expect(pagesRead).toBe(3);
    expect(writes[0]!.pagesRead).toBe(1);
    const text = writes.map((w) => w.text).join('');
    if (asJson) {
      expect(text).toBe(`${JSON.stringify({ items: expected, cursor: null }, null, 2)}\n`);
    } else {
      const lines = text.trimEnd().split('\n');
      expect(lines).toHaveLength(2501);
      expect(lines[0]).toMatch(
        /^SESSION {2}HEAD {2}CHECKPOINTS {2}UPDATED {15}CREATED {15}FORKED FROM {2}TAGS$/,
      );
      expect(lines.slice(1).map((l) => l.split(' ')[0])).toEqual(expected.map((s) => s.sessionId));
    }
  }
});

it("keeps a pin's note when pinned again without --note, and clears it only with --note ''", async () => {
  const store = new CheckpointStore(memory());
  for (let i = 1; i <= 3; i++) await store.checkpoint('chat', { i });
  const stores = { 'memory:x': store };
  const pin = async (...args: string[]) => {
    const run = await ckpt(['pin', 'chat', ...args], stores, 'memory:x');
    expect(run.code).toBe(0);
    return run.stdout;
  };
  const note = async () => (await store.list('chat', { beforeSeq: 3, limit: 1 })).items[0]?.pinNote;

  expect(await pin('2', '--note', 'approved')).toBe('chat: pinned 2\n');
  expect(await pin('2')).toBe('chat: 2 was already pinned; its note "approved" is kept\n');
  expect(await note()).toBe('approved');
  expect(JSON.parse(await pin('2', '--json'))).toEqual({
    sessionId: 'chat',
    seq: 2,
    pinned: true,
    pinNote: 'approved',
    changed: false,
  });
  expect(JSON.parse(await pin('2', '--note', 'approved', '--json'))).toMatchObject({
    changed: false,
  });
  expect(await pin('2', '--note', 'shipped')).toBe(
    'chat: 2 was already pinned; its note is now "shipped"\n',
  );
  expect(await note()).toBe('shipped');

  expect(JSON.parse(await pin('2', '--note', '', '--json'))).toEqual({
    sessionId: 'chat',
    seq: 2,
    pinned: true,
    pinNote: null,
    changed: true,
  });
  expect(await note()).toBeNull();
  expect((await store.list('chat', { beforeSeq: 3, limit: 1 })).items[0]?.pinned).toBe(true);
  expect(await pin('2', '--note', '')).toBe('chat: 2 was already pinned, without a note\n');
  expect(await pin('2', '--note', 'again')).toBe(
    'chat: 2 was already pinned; its note is now "again"\n',
  );
  expect(await pin('2', '--note', '')).toBe('chat: 2 was already pinned; cleared its note\n');

  // A checkpoint pinned with no note at all (--note '' on an unpinned one) is pinned, noteless.
  expect(JSON.parse(await pin('1', '--note', '', '--json'))).toMatchObject({
    pinNote: null,
    changed: true,
  });
  const missing = await ckpt(['pin', 'chat', '9'], stores, 'memory:x');
  expect(missing.code).toBe(3);
  expect(missing.stderr).toMatch(/NOT_FOUND/);
});

it('reports every value an interrupted rekey rewrote, so that its run and the next add up', async () => {
  const backend = memory();
  const plain = new CheckpointStore(backend);
  for (let i = 0; i < 30; i++) {
    for (let seq = 1; seq <= 5; seq++) await plain.checkpoint(`s-${i}`, { i, seq });
  }
  let rewritten = 0;
  let ctrlC: (() => void) | undefined;
  // Ctrl-C comes while a rewrite is under way, part way through the first page of sessions;
  // that rewrite still finishes.
  const counting = new Proxy(backend, {
    get(target, property) {
      const value = Reflect.get(target, property, target);
      if (property === 'close') return async () => {};
      if (property !== 'rewriteCheckpoint') {
        return typeof value === 'function' ? value.bind(target) : value;
      }
      return async (...args: unknown[]) => {
        if (rewritten === 37) ctrlC?.();
        const done = await (value as (...a: unknown[]) => Promise<boolean>).apply(target, args);
        if (done) rewritten++;
        return done;
      };
    },
  });
  const rekey = async (...args: string[]) => {
    const stdout = sink();
    const stderr = sink();
    const code = await main(['rekey', ...args], {
      stdout: stdout.stream,
      stderr: stderr.stream,
      stdin: process.stdin,
      env: { CKPT_STORE: 'memory:x', CKPT_KEYS: `k1=${Buffer.alloc(32, 5).toString('base64')}` },
      open: async (_url, { codecs }) => new CheckpointStore(counting, { codecs }),
      onInterrupt(listener) {
        ctrlC = listener;
        return () => {
          ctrlC = undefined;
        };
      },
    });
    return { code, stdout: stdout.text(), stderr: stderr.text() };
  };

  const stopped = await rekey();
  expect(stopped.code).toBe(130);
  expect(rewritten).toBe(38);
  expect(stopped.stderr).toMatch(
    /\nckpt: interrupted: stopped after rewriting 38 checkpoints and 0 state values; every value is whole/,
  );
  const rest = await rekey('--json');
  expect(rest.code).toBe(0);
  expect(JSON.parse(rest.stdout)).toEqual({ checkpoints: 30 * 5 - 38, state: 0 });
  expect(rewritten).toBe(30 * 5);
});
