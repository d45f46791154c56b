/**
 * What a person meets running the built `ckpt` from a shell: a reader that closes the pipe
 * early, Ctrl-C in the middle of an import or an export, the hint for the next page pasted back, counts in
 * words, the tree's columns, and `doctor --strict`.
 */
import { execFile, spawn } from 'node:child_process';
import { createHash } from 'node:crypto';
import { existsSync, mkdtempSync, readdirSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CheckpointStore, encrypt, openStore } from '@ckpt/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CKPT, ckpt } from './support/binary.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-shell-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
// Far more than a pipe holds (64 KiB on Linux) when listed: the reader must close it mid-way.
const SESSIONS = 2000;
const many = `sqlite:${join(dir, 'many.db')}`;
const sessionId = (i: number) => `a-session-with-a-rather-long-id-so-that-lines-are-long-${i}`;

beforeAll(async () => {
  buildCli();
  // synchronous off: written fast here; the command opens it as usual.
  const store = await openStore(`${many}?synchronous=off`);
  for (let i = 0; i < SESSIONS; i++) await store.checkpoint(sessionId(i), { i });
  await store.close();
}, 300_000);

/** Run `script` in bash with `ckpt` as the built command; its exit status is the script's. */
function shell(script: string) {
  return new Promise<{ code: number; stdout: string; stderr: string }>((resolve) => {
    execFile(
      'bash',
      ['-c', `ckpt() { '${process.execPath}' '${CKPT}' "$@"; }\n${script}`],
      { maxBuffer: 64 * 1024 * 1024 },
      (err, stdout, stderr) => resolve({ code: err ? Number(err.code) : 0, stdout, stderr }),
    );
  });
}

describe('a reader that closes the pipe early', () => {
  it.each([
    ['sessions --all', /^SESSION\s+HEAD/],
    ['sessions --all --json', /^\{\n/],
    ['export', /^\{"type":"header"/],
  ])('ends `ckpt %s | head -1` quietly, with status 0', async (command, first) => {
    const run = await shell(
      `ckpt --store '${many}' ${command} | head -1; exit "\${PIPESTATUS[0]}"`,
    );
    expect(run.stderr).toBe('');
    expect(run.code).toBe(0);
    expect(run.stdout).toMatch(first);
    expect(run.stdout.split('\n')).toHaveLength(2);
  });
});

describe('the hint for the next page', () => {
  it('is a command that, pasted as it is, prints the next page', async () => {
    const first = await shell(`ckpt --store '${many}' sessions --limit 2`);
    const hint = /^more: (ckpt .*)\n$/.exec(first.stderr)?.[1];
    expect(hint).toMatch(/^ckpt --store \S*many\.db sessions --limit 2 --cursor \S+$/);
    const next = await shell(hint!);
    expect(next.code).toBe(0);
    const ids = (out: string) =>
      out
        .trim()
        .split('\n')
        .slice(1)
        .map((l) => l.split(/\s+/)[0]);
    expect(ids(first.stdout)).toEqual([sessionId(SESSIONS - 1), sessionId(SESSIONS - 2)]);
    expect(ids(next.stdout)).toEqual([sessionId(SESSIONS - 3), sessionId(SESSIONS - 4)]);
    // Each flag once, whatever was given.
    expect(next.stderr.match(/--limit/g)).toHaveLength(1);
    expect(next.stderr.match(/--store/g)).toHaveLength(1);
    expect(next.stderr.match(/--cursor/g)).toHaveLength(1);
  });

  it('leaves out a store that came from CKPT_STORE', async () => {
    const run = await shell(`CKPT_STORE='${many}' ckpt sessions --limit 1`);
    expect(run.stderr).toMatch(/^more: ckpt sessions --limit 1 --cursor \S+\n$/);
  });
});

describe('counts in words', () => {
  it('says 1 session, 1 checkpoint and 1 state value, and 2 of each', async () => {
    const url = `sqlite:${join(dir, 'words.db')}`;
    const store = await openStore(url);
    await store.checkpoint('one', { n: 1 });
    await store.state('prefs').set('theme', 'dark');
    const file = join(dir, 'words.jsonl');
    const one = await ckpt(['--store', url, 'export', '--out', file]);
    expect(one.stderr).toMatch(/^exported 1 session, 1 checkpoint and 1 state value in /);
    const imported = await ckpt(['--store', `sqlite:${join(dir, 'words-2.db')}`, 'import', file]);
    expect(imported.stderr).toMatch(/^imported 1 session, 1 checkpoint and 1 state value in /);
    const doctor = JSON.parse((await ckpt(['--store', url, 'doctor', '--json'])).stdout);
    expect(doctor[1].detail).toBe('1 session, 1 checkpoint, 1 state scope');
    await store.checkpoint('one', { n: 2 });
    await store.checkpoint('two', { n: 1 });
    await store.state('prefs').set('font', 'serif');
    const two = await ckpt(['--store', url, 'export', '--out', file]);
    expect(two.stderr).toMatch(/^exported 2 sessions, 3 checkpoints and 2 state values in /);
    expect((await ckpt(['--store', url, 'prune', 'one', '--keep-last', '1'])).stdout).toBe(
      'one: removed 1 checkpoint\n',
    );
    await store.close();
  });
});

describe('the tree', () => {
  it('keeps its columns aligned past seq 9 and 99', async () => {
    const url = `sqlite:${join(dir, 'long.db')}?synchronous=off`;
    const store = await openStore(url);
    for (let i = 1; i <= 120; i++) await store.checkpoint('long', { i }, { metadata: { i } });
    await store.rollback('long', 95);
    await store.checkpoint('long', 'a branch');
    await store.close();
    const { stdout } = await ckpt(['--store', url, 'tree', 'long']);
    const lines = stdout.trimEnd().split('\n').slice(1);
    expect(lines).toHaveLength(121);
    const at = new Set(lines.map((l) => l.search(/\d{4}-\d\d-\d\d /)));
    expect([...at]).toHaveLength(1);
  });
});

describe('ckpt doctor --strict', () => {
  it('exits 7 on a warning that writes can be lost, which without --strict exits 0', async () => {
    const loose = `sqlite:${join(dir, 'loose.db')}?synchronous=off`;
    const soundUrl = `sqlite:${join(dir, 'sound.db')}`;
    // Doctor looks at a store that is there; it makes none.
    for (const url of [loose, soundUrl]) await (await openStore(url)).close();
    const lax = await ckpt(['--store', loose, 'doctor']);
    expect(lax.code).toBe(0);
    expect(lax.stdout).toMatch(/^! durability +journal_mode = wal, synchronous = off: /m);
    const strict = await ckpt(['--store', loose, 'doctor', '--strict']);
    expect(strict.code).toBe(7);
    // The same findings (the first line holds a time).
    expect(strict.stdout.split('\n').slice(1)).toEqual(lax.stdout.split('\n').slice(1));
    const sound = await ckpt(['--store', soundUrl, 'doctor', '--strict']);
    expect(sound.code).toBe(0);
  });
});

describe('Ctrl-C during an import', () => {
  let target: CheckpointStore;
  const url = `sqlite:${join(dir, 'interrupted.db')}`;
  afterAll(() => target?.close());

  it('stops it cleanly, says how to take up where it stopped, and exits 130', async () => {
    const file = join(dir, 'three.jsonl');
    const source = `sqlite:${join(dir, 'three.db')}`;
    const from = await openStore(source);
    for (const id of ['a', 'b', 'c']) await from.checkpoint(id, { id });
    await from.close();
    expect((await ckpt(['--store', source, 'export', '--out', file])).code).toBe(0);
    const lines = readFileSync(file, 'utf8').split('\n');

    // The header and the first session (its line and its one checkpoint), then the import waits.
    const child = spawn(process.execPath, [CKPT, '--store', url, 'import']);
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    child.stdin.write(`${lines.slice(0, 3).join('\n')}\n`);
    target = await openStore(url);
    while ((await target.sessions()).items.length === 0) {
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    child.stdin.destroy();
    expect(stderr).toMatch(
      /stopping after the sessions being written; Ctrl-C again to quit at once\nckpt: interrupted: stopped after 1 session \(1 imported\); every session in the store is whole or absent\. To take up where it stopped, run with the same export on stdin: ckpt --store \S+ import - --if-exists skip\n$/,
    );
    expect((await target.sessions()).items.map((s) => s.sessionId)).toHaveLength(1);

    const again = /run with the same export on stdin: (.*)\n$/.exec(stderr)![1]!;
    writeFileSync(join(dir, 'again.sh'), `${again} < '${file}'`);
    const rest = await shell(`. '${join(dir, 'again.sh')}'`);
    expect(rest.code).toBe(0);
    expect(rest.stderr).toMatch(
      /^imported 2 sessions, 2 checkpoints and 0 state values in [\d.]+ s \(1 session already there, skipped\)\n$/,
    );
    expect((await target.sessions()).items.map((s) => s.sessionId).sort()).toEqual(['a', 'b', 'c']);
  });
});

describe('Ctrl-C during an export to a file', () => {
  it('removes the partial file, which holds decrypted values, says so, and exits 130', async () => {
    const key = createHash('sha256').update('export key').digest();
    const url = `sqlite:${join(dir, 'sealed.db')}`;
    const sealed = await openStore(`${url}?synchronous=off`, {
      codecs: [encrypt({ keys: { k1: key }, current: 'k1' })],
    });
    // Enough that the export is still writing when Ctrl-C comes after its first session.
    for (let i = 0; i < SESSIONS; i++) {
      await sealed.checkpoint(sessionId(i), {
        card: `4111 1111 1111 ${i}`,
        notes: 'n'.repeat(2000),
      });
    }
    await sealed.close();
    const out = join(dir, 'sealed.jsonl');
    writeFileSync(out, 'an earlier export\n');

    const child = spawn(process.execPath, [CKPT, '--store', url, 'export', '--out', out], {
      env: { ...process.env, CKPT_KEYS: `k1=${key.toString('base64')}` },
    });
    let stderr = '';
    child.stderr.on('data', (chunk) => {
      stderr += chunk;
    });
    const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
    // Mid-export: the file written beside the target holds a session's values, decrypted.
    const partial = join(dir, `.sealed.jsonl.${child.pid}.partial`);
    while (!(existsSync(partial) && readFileSync(partial, 'utf8').includes('4111 1111 1111'))) {
      await new Promise((resolve) => setTimeout(resolve, 5));
    }
    child.kill('SIGINT');
    expect(await exited).toBe(130);
    expect(existsSync(partial)).toBe(false);
    expect(readdirSync(dir).filter((name) => name.endsWith('.partial'))).toEqual([]);
    expect(readFileSync(out, 'utf8')).toBe('an earlier export\n');
    expect(stderr).toMatch(
      /stopping the export; Ctrl-C again to quit at once\nckpt: interrupted: stopped after \d+ sessions?; removed the partial file "(.*)", so nothing was written to "(.*)"\. Run the same command again to export the whole store\.\n$/,
    );
    const [, named, target] =
      /removed the partial file "(.*)", so nothing was written to "(.*)"/.exec(stderr)!;
    expect([named, target]).toEqual([partial, out]);
  });
});
