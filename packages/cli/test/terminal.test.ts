/**
 * What a person at a terminal sees, under a real pseudo-terminal (util-linux `script`), and
 * what a pipe gets instead: the progress bar and colour only on a terminal, a question before
 * a delete only there.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '@ckpt/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, CKPT, ckpt } from './support/binary.js';
import { fill } from './support/store-fill.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-tty-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const source = `sqlite:${join(dir, 'source.db')}`;
let made = 0;
const fresh = () => `sqlite:${join(dir, `target-${made++}.db`)}`;

beforeAll(async () => {
  buildCli();
  const store = await openStore(source);
  await fill(store);
  await store.close();
}, 300_000);

/**
 * Run `ckpt` under a pseudo-terminal (`columns` wide): everything it writes, as the terminal
 * got it.
 */
function underTerminal(
  args: string[],
  input = '',
  env: Record<string, string> = {},
  columns = 200,
) {
  const command = `stty cols ${columns} rows 50; ${[process.execPath, CKPT, ...args]
    .map((a) => `'${a.replaceAll("'", "'\\''")}'`)
    .join(' ')}`;
  return new Promise<{ code: number; output: string }>((resolve) => {
    const child = execFile(
      'script',
      ['-qec', command, '/dev/null'],
      { env: { ...process.env, TERM: 'xterm-256color', ...env } },
      (err, stdout) =>
        resolve({ code: err ? Number((err as { code?: number }).code) : 0, output: stdout }),
    );
    child.stdin!.end(input);
  });
}

// A foreground colour: ESC [ 3x m.
const COLOUR = new RegExp(`${String.fromCharCode(27)}\\[3\\dm`);
// The terminal's escapes (colours, the cursor).
const ESCAPES = new RegExp(`${String.fromCharCode(27)}\\[[0-9;?]*[A-Za-z]`, 'g');
/** What a terminal got, without its escapes and carriage returns. */
const plain = (text: string) => text.replace(ESCAPES, '').replaceAll('\r', '');

describe('on a terminal', () => {
  it('draws a progress bar with counts and rate on stderr while copying', async () => {
    const { code, output } = await underTerminal(['copy', '--from', source, '--to', fresh()]);
    expect(code).toBe(0);
    expect(output).toMatch(
      /100% \| copied 7 of 7 sessions \| [\d,]+ sessions\/s \| \d+ checkpoints \| ETA/,
    );
    expect(output).toMatch(COLOUR);
    expect(output).toMatch(/copied 7 sessions, \d+ checkpoints and 6 state values/);
  });

  it('draws a progress bar while sweeping, and a summary at the end', async () => {
    const { code, output } = await underTerminal([
      '--store',
      source,
      'sweep',
      '--keep-last',
      '100',
      '--dry-run',
    ]);
    expect(code).toBe(0);
    expect(output).toMatch(
      /100% \| looked at 7 of 7 sessions \| [\d,]+ sessions\/s \| 0 checkpoints/,
    );
    expect(output).toMatch(
      // Without --idle, nothing is said of idle sessions.
      /\bwould remove 0 checkpoints, looking at 7 sessions in/,
    );
  });

  it('draws a progress bar over the sessions while rekeying, says what it rewrote, and asks to write the file anew', async () => {
    const url = fresh();
    expect((await ckpt(['copy', '--from', source, '--to', url])).code).toBe(0);
    const key = Buffer.alloc(32, 7).toString('base64');
    const { code, output } = await underTerminal(['--store', url, 'rekey'], 'y\n', {
      CKPT_KEYS: `k1=${key}`,
    });
    expect(code).toBe(0);
    expect(output).toMatch(
      /100% \| rekeyed 7 of 7 sessions \| [\d,]+ sessions\/s \| \d+ checkpoints \| ETA/,
    );
    // The walk again for what was written meanwhile counts the sessions anew, on a bar of its own.
    expect(output).toMatch(/100% \| pass 2: checked 7 of 7 sessions \| /);
    expect(output).toMatch(
      /rekeyed \d+ checkpoints and 6 state values in [\d.]+ s; every value is now under aes-256-gcm with key k1\./,
    );
    expect(output).toMatch(
      /may remain in ".*target-\d+\.db": .* Write the file anew now \(VACUUM; writers wait until it ends\)\? \[y\/N\] vacuumed ".*target-\d+\.db": it holds only what is stored/,
    );
    expect(output).not.toContain(key);
  });

  it('draws no colour with NO_COLOR', async () => {
    const { code, output } = await underTerminal(['copy', '--from', source, '--to', fresh()], '', {
      NO_COLOR: '1',
    });
    expect(code).toBe(0);
    expect(output).toMatch(/copied 7 of 7 sessions \|/);
    expect(output).not.toMatch(COLOUR);
    const tree = await underTerminal(['--store', source, 'tree', 'main'], '', { NO_COLOR: '1' });
    expect(tree.output).not.toMatch(COLOUR);
  });

  it('shows how much of the file an import has read', async () => {
    const file = join(dir, 'for-import.jsonl');
    expect((await ckpt(['--store', source, 'export', '--out', file])).code).toBe(0);
    const { code, output } = await underTerminal(['--store', fresh(), 'import', file]);
    expect(code).toBe(0);
    expect(output).toMatch(/100% \| imported 7 sessions \| read [\d.]+ kB of [\d.]+ kB \|/);
  });

  it('cuts values at the width of the terminal, and prints them whole with --wide or --full', async () => {
    const url = `sqlite:${join(dir, 'wide.db')}`;
    const store = await openStore(url);
    const long = `a long answer ${'that goes on '.repeat(12)}to the end`;
    await store.checkpoint(
      'chat',
      { v: 1 },
      { metadata: { note: long }, transcript: [{ role: 'assistant', text: long }] },
    );
    await store.checkpoint('chat', { v: long }, { metadata: { note: 'short' } });
    await store.close();
    for (const args of [
      ['transcript', 'chat'],
      ['tree', 'chat'],
      ['history', 'chat'],
      ['show', 'chat', '--seq', '1'],
      ['diff', 'chat', '1', '2'],
    ]) {
      let cut = plain((await underTerminal(['--store', url, ...args], '', {}, 60)).output);
      // `show` prints the checkpoint's metadata and data whole; its transcript items are cut.
      if (args[0] === 'show') cut = cut.slice(cut.indexOf('\ntranscript\n'));
      const lines = cut.trimEnd().split('\n');
      expect(Math.max(...lines.map((l) => l.length)), args.join(' ')).toBeLessThanOrEqual(60);
      expect(cut, args.join(' ')).toContain('…');
      expect(cut, args.join(' ')).not.toContain('to the end');
      for (const wide of ['--wide', '--full']) {
        const whole = plain(
          (await underTerminal(['--store', url, ...args, wide], '', {}, 60)).output,
        );
        expect(whole, `${args.join(' ')} ${wide}`).toContain('to the end');
      }
    }
    // In a pipe nothing is cut.
    expect((await ckpt(['--store', url, 'transcript', 'chat'])).stdout).toContain(
      `assistant: ${long}`,
    );
  });

  it("cuts a session's tags at the width of the terminal in sessions and tree, and prints them whole with --wide", async () => {
    const url = `sqlite:${join(dir, 'tags.db')}`;
    const store = await openStore(url);
    const long = `a long note ${'that goes on '.repeat(12)}to the end`;
    await store.checkpoint('tagged', 1, { tags: { note: long, user: 'ann' } });
    await store.close();
    // The columns before the tags take about a hundred.
    for (const [args, columns] of [
      [['sessions'], 120],
      [['tree', 'tagged'], 60],
    ] as const) {
      const cut = plain((await underTerminal(['--store', url, ...args], '', {}, columns)).output);
      const lines = cut.trimEnd().split('\n');
      expect(Math.max(...lines.map((l) => l.length)), args.join(' ')).toBeLessThanOrEqual(columns);
      expect(cut, args.join(' ')).toContain('note="a long note');
      expect(cut, args.join(' ')).not.toContain('user=ann');
      const whole = plain(
        (await underTerminal(['--store', url, ...args, '--wide'], '', {}, columns)).output,
      );
      expect(whole, args.join(' ')).toContain('to the end" user=ann');
    }
  });

  it('colours what diff added, removed and changed', async () => {
    const { output } = await underTerminal(['--store', source, 'diff', 'main-fork', '1', '2']);
    expect(output).toMatch(new RegExp(`${String.fromCharCode(27)}\\[33m~ data\\.step`));
  });

  it('colours the tree', async () => {
    const { output } = await underTerminal(['--store', source, 'tree', 'main']);
    expect(output).toMatch(COLOUR);
    expect(output).toMatch(/◉/);
  });

  it('asks before deleting, and deletes nothing without a yes', async () => {
    const target = fresh();
    await ckpt(['copy', '--from', source, '--to', target]);
    const no = await underTerminal(['--store', target, 'delete', 'main'], 'n\n');
    expect(no.output).toMatch(
      /Delete session "main" with its 3 checkpoints\? This cannot be undone\. \[y\/N\]/,
    );
    expect(no.output).toMatch(/not confirmed; nothing was deleted/);
    expect(no.code).toBe(2);
    expect((await ckpt(['--store', target, 'show', 'main'])).code).toBe(0);
    const yes = await underTerminal(['--store', target, 'delete', 'main'], 'y\n');
    expect(yes.code).toBe(0);
    expect((await ckpt(['--store', target, 'show', 'main'])).code).toBe(3);
  });

  it('asks before destroying a store, saying what it holds, and removes nothing without a yes', async () => {
    const target = fresh();
    await ckpt(['copy', '--from', source, '--to', target]);
    const no = await underTerminal(['--store', target, 'destroy'], 'n\n');
    expect(no.output).toContain(
      `Destroy ${target} with 7 sessions and 3 state scopes? This cannot be undone. [y/N]`,
    );
    expect(no.output).toMatch(/not confirmed; nothing was removed/);
    expect(no.code).toBe(2);
    expect((await ckpt(['--store', target, 'show', 'main'])).code).toBe(0);
    const yes = await underTerminal(['--store', target, 'destroy'], 'y\n');
    expect(yes.code).toBe(0);
    expect(yes.output).toContain(`destroyed ${target}: removed 7 sessions and 3 state scopes`);
    expect((await ckpt(['--store', target, 'sessions'])).code).toBe(3);
  });
});

describe('in a pipe', () => {
  it('draws no progress bar and no colour, and still says what it did', async () => {
    const { code, stdout, stderr } = await ckpt(['copy', '--from', source, '--to', fresh()]);
    expect(code).toBe(0);
    expect(stdout).toBe('');
    expect(stderr).toMatch(/^copied 7 sessions, \d+ checkpoints and 6 state values in [\d.]+ s\n$/);
    expect(stderr).not.toContain('\u001b');
  });
});
