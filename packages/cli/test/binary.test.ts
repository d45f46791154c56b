/**
 * The built `ckpt` executable, run as a child process without a store; its cases on each
 * backend are in binary-<backend>.test.ts.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '@ckpt/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, ckpt } from './support/binary.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
beforeAll(buildCli, 300_000);

describe('ckpt without a store', () => {
  it('has --help with an example on every command', async () => {
    const top = await ckpt(['--help']);
    expect(top.code).toBe(0);
    const commands = [...top.stdout.matchAll(/^ {2}([a-z]+) /gm)]
      .map((m) => m[1]!)
      .filter((c) => c !== 'help');
    expect(commands).toEqual([
      'sessions',
      'show',
      'tree',
      'transcript',
      'history',
      'watch',
      'diff',
      'rollback',
      'fork',
      'prune',
      'delete',
      'tag',
      'sweep',
      'pin',
      'unpin',
      'destroy',
      'state',
      'export',
      'import',
      'copy',
      'rekey',
      'doctor',
      'studio',
    ]);
    expect(top.stdout).toMatch(/Exit status: 0 done/);
    for (const command of commands) {
      const help = await ckpt([command, '--help']);
      expect(help.code, command).toBe(0);
      expect(help.stdout, command).toMatch(/\nExample:\n {2}\$ ckpt /);
    }
  });

  it('says how to name a store when none is given, as a usage error', async () => {
    const run = await ckpt(['sessions'], { env: { CKPT_STORE: '' } });
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(
      /^ckpt: error: no store given: pass --store <url> or set CKPT_STORE, such as 'sqlite:\.\/agent\.db'.*\n$/,
    );
    expect(run.stderr.split('\n')).toHaveLength(2);
    const empty = await ckpt(['--store', '', 'sessions']);
    expect(empty).toEqual({
      code: 2,
      stdout: '',
      stderr:
        "ckpt: error: --store is empty: give it a store's URL, such as 'sqlite:./agent.db' or 'postgres://user@host/db'.\n",
    });
  });

  it('says that the namespace goes in the URL when --namespace is given', async () => {
    for (const args of [
      ['--store', `sqlite:${dir}/x.db`, 'sessions', '--namespace', 'agents'],
      ['--namespace=agents', 'sessions'],
    ]) {
      const run = await ckpt(args);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        /^ckpt: error: unknown option '--namespace(=…)?' \(the namespace is part of the store's URL: add \?namespace=<name>, as in --store 'sqlite:\.\/agent\.db\?namespace=agents'\) \(run ckpt (sessions )?--help/,
      );
      expect(run.stderr.split('\n')).toHaveLength(2);
    }
  });

  it('says in one line that an export to import cannot be read, as a usage error', async () => {
    const store = ['--store', `sqlite:${dir}/import-missing.db`];
    const missing = await ckpt([...store, 'import', join(dir, 'no-such.jsonl')]);
    expect(missing).toEqual({
      code: 2,
      stdout: '',
      stderr: `ckpt: error: cannot read ${JSON.stringify(join(dir, 'no-such.jsonl'))}: there is no such file; give the path of an export, or - (or nothing) to read stdin.\n`,
    });
    const directory = await ckpt([...store, 'import', dir]);
    expect(directory.code).toBe(2);
    expect(directory.stderr).toMatch(/^ckpt: error: cannot read .*: it is a directory;.*\n$/);
    const unwritable = await ckpt([...store, 'export', '--out', join(dir, 'no-dir', 'x.jsonl')]);
    expect(unwritable.code).toBe(2);
    expect(unwritable.stderr).toMatch(/^ckpt: error: cannot write .*: there is no such file;.*\n$/);
  });

  it('refuses --ns without --thread, and a session given twice', async () => {
    const store = ['--store', `sqlite:${dir}/refusals.db`];
    const ns = await ckpt([...store, 'show', 'x', '--ns', 'sub']);
    expect(ns.code).toBe(2);
    expect(ns.stderr).toBe(
      'ckpt: error: --ns names the namespace of a thread: give --thread <thread_id> too.\n',
    );
    const both = await ckpt([...store, 'show', 'x', '--thread', 't']);
    expect(both.code).toBe(2);
    expect(both.stderr).toMatch(/give the session either as <id> or as --thread "t", not both/);
    const none = await ckpt([...store, 'rollback', '--thread', 't']);
    expect(none.code).toBe(2);
    expect(none.stderr).toBe('ckpt: error: missing argument <seq> after the session.\n');
    const bad = await ckpt([...store, 'rollback', '--thread', 't', 'x']);
    expect(bad.code).toBe(2);
    expect(bad.stderr).toMatch(/seq must be a whole number from 1 up, got "x"/);
  });

  it('reads the store from CKPT_STORE', async () => {
    await (await openStore(`sqlite:${dir}/env.db`)).close();
    const run = await ckpt(['sessions', '--json'], { env: { CKPT_STORE: `sqlite:${dir}/env.db` } });
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({ items: [], cursor: null });
  });

  it('exits 6 for a store it cannot reach, saying what to do and never the password', async () => {
    const run = await ckpt(['--store', 'postgres://app:s3cret@127.0.0.1:1/db', 'sessions']);
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(
      /^ckpt: error BACKEND: .*ECONNREFUSED.*check that the server is running/,
    );
    expect(run.stderr).not.toContain('s3cret');
    expect(run.stderr.trimEnd().split('\n')).toHaveLength(1);
  });

  it('exits 2 for an unknown command or option, or a missing argument, in one line', async () => {
    const cases: [string[], string][] = [
      [
        ['sessionz'],
        "ckpt: error: unknown command 'sessionz' (Did you mean sessions?) (run ckpt --help for the commands, ckpt <command> --help for one of them)\n",
      ],
      [
        ['sessions', '--lmit', '3'],
        "ckpt: error: unknown option '--lmit' (Did you mean --limit?) (run ckpt sessions --help for its usage)\n",
      ],
      [
        ['sessions', '--limit'],
        "ckpt: error: option '--limit <n>' argument missing (run ckpt sessions --help for its usage)\n",
      ],
      [
        ['--jsn', 'sessions'],
        "ckpt: error: unknown option '--jsn' (Did you mean --json?) (run ckpt --help for the commands, ckpt <command> --help for one of them)\n",
      ],
      [
        ['state'],
        "ckpt: error: missing required argument 'scope' (run ckpt state --help for its usage)\n",
      ],
    ];
    for (const [args, stderr] of cases) {
      expect(await ckpt(args)).toEqual({ code: 2, stdout: '', stderr });
    }
  });
});
