/** `ckpt watch`, the built executable in a pipe: lines as changes commit, JSON lines, Ctrl-C. */
import { type ChildProcess, spawn } from 'node:child_process';
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
import { afterAll, beforeAll, describe, expect, it, vi } from 'vitest';
import { buildCli, CKPT, ckpt } from './support/binary.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-watch-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(buildCli, 300_000);

/** `ckpt watch` running, what it printed so far, and its exit. */
function watching(args: string[]) {
  const child: ChildProcess = spawn(process.execPath, [CKPT, 'watch', ...args], {
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  const out = { stdout: '', stderr: '' };
  child.stdout!.setEncoding('utf8').on('data', (text: string) => {
    out.stdout += text;
  });
  child.stderr!.setEncoding('utf8').on('data', (text: string) => {
    out.stderr += text;
  });
  const exited = new Promise<number | null>((resolve) => child.on('exit', resolve));
  return { child, out, exited };
}

const lines = (text: string) => text.split('\n').filter((line) => line !== '');

describe('ckpt watch', () => {
  it('prints a line for each change as it commits, and stops on Ctrl-C with status 0', async () => {
    const path = join(dir, 'lines.db');
    const store = new CheckpointStore(sqlite({ path }));
    await store.checkpoint('before', 1);
    const run = watching(['--store', `sqlite:${path}`, '--prefix', 'user-1/']);
    await vi.waitFor(() => expect(run.out.stderr).toBe('watching; Ctrl-C to stop\n'), {
      timeout: 30_000,
    });
    await store.checkpoint('user-2/a', 1);
    await store.checkpoint('user-1/a', 1);
    await store.checkpoint('user-1/a', 2);
    await store.rollback('user-1/a', 1);
    await store.delete('user-1/a');
    await vi.waitFor(() => expect(lines(run.out.stdout)).toHaveLength(4), { timeout: 15_000 });
    expect(lines(run.out.stdout).map((line) => line.replace(/^\S+ \S+Z {2}/, ''))).toEqual([
      'checkpoint  user-1/a  1',
      'checkpoint  user-1/a  2',
      'rollback    user-1/a  1',
      'delete      user-1/a',
    ]);
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    await store.close();
  });

  it('prints JSON lines with --json, whose cursors --since goes on from', async () => {
    const path = join(dir, 'json.db');
    const store = new CheckpointStore(sqlite({ path }));
    const run = watching(['--store', `sqlite:${path}`, '--json', '--session', 's']);
    // With --json nothing goes to stderr: wait for the first change instead.
    const written = (async () => {
      for (let n = 1; lines(run.out.stdout).length === 0; n++) {
        await store.checkpoint('s', { n });
        await new Promise((resolve) => setTimeout(resolve, 200));
      }
    })();
    await vi.waitFor(() => expect(lines(run.out.stdout).length).toBeGreaterThan(0), {
      timeout: 30_000,
    });
    await written;
    run.child.kill('SIGINT');
    expect(await run.exited).toBe(0);
    const events = lines(run.out.stdout).map((line) => JSON.parse(line));
    expect(events[0]).toMatchObject({ sessionId: 's', kind: 'checkpoint' });
    expect(run.out.stderr).toBe('');

    const last = events.at(-1);
    await store.checkpoint('s', { after: true });
    const resumed = watching(['--store', `sqlite:${path}`, '--json', '--since', last.cursor]);
    await vi.waitFor(() => expect(lines(resumed.out.stdout).length).toBeGreaterThan(0), {
      timeout: 30_000,
    });
    resumed.child.kill('SIGINT');
    expect(await resumed.exited).toBe(0);
    expect(JSON.parse(lines(resumed.out.stdout)[0]!)).toMatchObject({
      sessionId: 's',
      kind: 'checkpoint',
      seq: last.seq + 1,
    });
    await store.close();
  });

  it('refuses a cursor it did not make, with status 5', async () => {
    const path = join(dir, 'refused.db');
    const store = new CheckpointStore(sqlite({ path }));
    await store.checkpoint('s', 1);
    await store.close();
    const run = await ckpt(['watch', '--store', `sqlite:${path}`, '--since', 'nonsense']);
    expect(run.code).toBe(5);
    expect(run.stderr).toMatch(/^ckpt: error INVALID_ARGUMENT: since "nonsense" is not a cursor/);
  });
});
