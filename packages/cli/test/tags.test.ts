/**
 * Tags through the built `ckpt`, run as a child process on SQLite stores: `sessions --where`
 * (alone, with `--prefix`, page by page and `--all`), a bad tag refused as a usage error before
 * any store is opened, `tag` (print, set, remove, replace, clear), `show` and `tree` printing
 * them, and `export`, `import` and `copy` carrying them.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { type CheckpointStore, openStore } from '@ckpt/core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, ckpt } from './support/binary.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-tags-'));
const url = `sqlite:${join(dir, 'tags.db')}`;
let store: CheckpointStore;

/** JSON as the command prints it: dates as ISO text. */
const asPrinted = (value: unknown) => JSON.parse(JSON.stringify(value));
const run = (...args: string[]) => ckpt(['--store', url, ...args]);
const ids = (stdout: string) =>
  (JSON.parse(stdout) as { items: { sessionId: string }[] }).items.map((s) => s.sessionId);
const pause = () => new Promise((resolve) => setTimeout(resolve, 2));

beforeAll(async () => {
  buildCli();
  store = await openStore(url);
  const sessions: [string, Record<string, string>][] = [
    ['chat-1', { user: 'ann', status: 'open' }],
    ['chat-2', { user: 'ann', status: 'done' }],
    ['chat-3', { user: 'bob', status: 'open' }],
    ['chat-4', { user: 'ann', status: 'open', note: 'on hold' }],
    ['run-1', { user: 'ann', status: 'open', formula: 'a=b' }],
    ['plain', {}],
  ];
  for (const [id, tags] of sessions) {
    await store.checkpoint(id, { id }, { tags });
    await pause();
  }
}, 300_000);
afterAll(async () => {
  await store?.close();
  rmSync(dir, { recursive: true, force: true });
});

describe('ckpt sessions --where', () => {
  it('lists the sessions that have every tag given, newest first, as the store does', async () => {
    const listed = await run('sessions', '--where', 'user=ann', '--where', 'status=open', '--json');
    expect(listed.code).toBe(0);
    const where = { user: 'ann', status: 'open' };
    expect(JSON.parse(listed.stdout)).toEqual(asPrinted(await store.sessions({ where })));
    expect(ids(listed.stdout)).toEqual(['run-1', 'chat-4', 'chat-1']);
    expect(JSON.parse(listed.stdout).items[0].tags).toEqual({
      formula: 'a=b',
      status: 'open',
      user: 'ann',
    });
  });

  it('shows the tags in a column, a value with a space in quotes', async () => {
    const table = await run('sessions', '--where', 'user=ann');
    expect(table.code).toBe(0);
    const lines = table.stdout.trimEnd().split('\n');
    expect(lines[0]).toMatch(
      /^SESSION\s+HEAD\s+CHECKPOINTS\s+UPDATED\s+CREATED\s+FORKED FROM\s+TAGS$/,
    );
    expect(lines.slice(1).map((l) => l.split(/\s+/)[0])).toEqual([
      'run-1',
      'chat-4',
      'chat-2',
      'chat-1',
    ]);
    expect(lines[2]).toMatch(/\snote="on hold" status=open user=ann$/);
    expect(lines[1]).toMatch(/\sformula=a=b status=open user=ann$/);
    // A session without tags has none in the whole catalog's table.
    const all = await run('sessions');
    expect(all.stdout).toMatch(/^plain\s.*Z$/m);
  });

  it('takes a value with = in it: the pair splits at the first', async () => {
    const listed = await run('sessions', '--where', 'formula=a=b', '--json');
    expect(ids(listed.stdout)).toEqual(['run-1']);
  });

  it('combines with --prefix', async () => {
    const listed = await run('sessions', '--prefix', 'chat-', '--where', 'status=open', '--json');
    expect(ids(listed.stdout)).toEqual(['chat-4', 'chat-3', 'chat-1']);
  });

  it('pages within the tags: the hint for the next page repeats them, and its cursor serves only them', async () => {
    const first = await run(
      'sessions',
      '--where',
      'user=ann',
      '--where',
      'status=open',
      '--limit',
      '2',
    );
    expect(first.code).toBe(0);
    const hint =
      /^more: ckpt --store \S+ (sessions --where user=ann --where status=open --limit 2 --cursor (\S+))$/m.exec(
        first.stderr,
      );
    expect(hint, first.stderr).not.toBeNull();
    const next = await run(...hint![1]!.split(' '), '--json');
    expect(ids(next.stdout)).toEqual(['chat-1']);
    const elsewhere = await run('sessions', '--cursor', hint![2]!);
    expect(elsewhere.code).toBe(5);
    expect(elsewhere.stderr).toMatch(/^ckpt: error INVALID_ARGUMENT: cursor was not produced/);
  });

  it('lists every page with --all', async () => {
    const listed = await run('sessions', '--where', 'user=ann', '--all', '--json');
    expect(JSON.parse(listed.stdout)).toEqual({
      items: asPrinted((await store.sessions({ where: { user: 'ann' } })).items),
      cursor: null,
    });
  });

  it('lists nothing, with status 0, when no session has the tags', async () => {
    const listed = await run('sessions', '--where', 'user=nobody', '--json');
    expect(listed.code).toBe(0);
    expect(JSON.parse(listed.stdout)).toEqual({ items: [], cursor: null });
  });

  it('hints on stderr, when nothing is found, that tags run together in one value are two --where', async () => {
    const hint =
      'ckpt: no session has user="ann,status=open"; to ask for two tags, give --where twice: --where user=ann --where status=open\n';
    const plain = await run('sessions', '--where', 'user=nobody');
    for (const args of [
      ['--where', 'user=ann,status=open'],
      ['--where', 'user=ann,status=open', '--all'],
      ['--where', 'user=ann,status=open', '--json'],
    ]) {
      const listed = await run('sessions', ...args);
      expect(listed.code).toBe(0);
      expect(listed.stderr).toBe(hint);
      // Stdout is what any empty listing prints.
      const empty = await run('sessions', ...args.map((a) => a.replace(/^user=.*/, 'user=nobody')));
      expect(listed.stdout).toBe(empty.stdout);
    }
    expect(plain.stderr).toBe('');
    const spaced = await run('sessions', '--where', 'user=ann status=open');
    expect(spaced.stderr).toBe(
      'ckpt: no session has user="ann status=open"; to ask for two tags, give --where twice: --where user=ann --where status=open\n',
    );
    // A comma without a key after it, or a listing that finds something, gives no hint.
    await store.checkpoint('comma', { id: 'comma' }, { tags: { team: 'a,b=c' } });
    for (const value of ['user=ann,bob', 'team=a,b=c']) {
      const quiet = await run('sessions', '--where', value);
      expect(quiet.stderr).toBe('');
    }
    expect((await run('sessions', '--where', 'team=a,b=c', '--json')).stdout).toMatch(/"comma"/);
    await store.delete('comma');
  });

  it.each([
    [['user'], /argument 'user' is invalid\. a tag is key=value, such as user=ann, got "user"/],
    [['=ann'], /argument '=ann' is invalid\. a tag is key=value/],
    [
      ['user name=ann'],
      /a tag key is 1 to 64 of the characters A-Z a-z 0-9 _ \. : -, got "user name"/,
    ],
    [[`${'k'.repeat(65)}=x`], /a tag key is 1 to 64/],
    [['user=ann', 'user=bob'], /the key "user" is given twice \(user=ann and user=bob\)/],
    [
      [`note=${'é'.repeat(129)}`],
      /the value of "note" is 258 bytes of UTF-8; a tag value is at most 256/,
    ],
    [Array.from({ length: 17 }, (_, i) => `k${i}=v`), /more than 16 tags are given/],
  ])(
    'refuses %j as a usage error naming --where, before opening the store',
    async (pairs, message) => {
      const missing = join(dir, 'never.db');
      const refused = await ckpt([
        '--store',
        `sqlite:${missing}`,
        'sessions',
        ...pairs.flatMap((p) => ['--where', p]),
      ]);
      expect(refused.code).toBe(2);
      expect(refused.stdout).toBe('');
      expect(refused.stderr).toMatch(/^ckpt: error: option '--where <key=value>' argument /);
      expect(refused.stderr).toMatch(message);
      expect(refused.stderr).toMatch(/\(run ckpt sessions --help for its usage\)\n$/);
      expect(existsSync(missing)).toBe(false);
    },
  );
});

describe('ckpt show and tree', () => {
  it('print the tags of the session', async () => {
    const shown = await run('show', 'chat-4');
    expect(shown.stdout.split('\n')[1]).toMatch(/\snote="on hold" status=open user=ann$/);
    const json = await run('show', 'chat-4', '--json');
    expect(JSON.parse(json.stdout).info.tags).toEqual({
      note: 'on hold',
      status: 'open',
      user: 'ann',
    });
    const tree = await run('tree', 'chat-4');
    expect(tree.stdout.split('\n')[0]).toBe(
      'chat-4 · head 1 · 1 checkpoint · note="on hold" status=open user=ann',
    );
    expect((await run('tree', 'plain')).stdout.split('\n')[0]).toBe(
      'plain · head 1 · 1 checkpoint',
    );
  });
});

describe('ckpt tag', () => {
  const tagsOf = async (id: string) => (await store.info(id))?.tags;

  it('prints the tags of a session, or says it has none', async () => {
    expect((await run('tag', 'chat-4')).stdout).toBe(
      'chat-4: note="on hold" status=open user=ann\n',
    );
    expect((await run('tag', 'plain')).stdout).toBe('plain: no tags\n');
    expect(JSON.parse((await run('tag', 'chat-1', '--json')).stdout)).toEqual({
      sessionId: 'chat-1',
      tags: { status: 'open', user: 'ann' },
    });
  });

  it('sets the tags given and keeps the others, leaving the session where it was in the catalog', async () => {
    await store.checkpoint('tag-a', 1, { tags: { user: 'ann', status: 'open' } });
    const before = await store.info('tag-a');
    const done = await run('tag', 'tag-a', 'status=closed', 'reviewer=eve');
    expect(done.code).toBe(0);
    expect(done.stdout).toBe(
      'tag-a: reviewer=eve status=closed user=ann (before: status=open user=ann)\n',
    );
    expect(await store.info('tag-a')).toEqual({
      ...before,
      tags: { reviewer: 'eve', status: 'closed', user: 'ann' },
    });
    const found = await run('sessions', '--where', 'status=closed', '--json');
    expect(ids(found.stdout)).toEqual(['tag-a']);
  });

  it('removes a tag with --remove, and with --json says what it did', async () => {
    await store.checkpoint('tag-b', 1, { tags: { user: 'ann', reviewer: 'eve' } });
    const done = await run('tag', 'tag-b', '--remove', 'reviewer', 'status=done', '--json');
    expect(JSON.parse(done.stdout)).toEqual({
      sessionId: 'tag-b',
      tags: { status: 'done', user: 'ann' },
      previous: { reviewer: 'eve', user: 'ann' },
      changed: true,
    });
    expect(await tagsOf('tag-b')).toEqual({ status: 'done', user: 'ann' });
  });

  it('makes the tags given the whole set with --replace, and removes them all with --clear', async () => {
    await store.checkpoint('tag-c', 1, { tags: { user: 'ann', status: 'open' } });
    expect((await run('tag', 'tag-c', '--replace', 'owner=bob')).code).toBe(0);
    expect(await tagsOf('tag-c')).toEqual({ owner: 'bob' });
    const cleared = await run('tag', 'tag-c', '--clear');
    expect(cleared.stdout).toBe('tag-c: no tags (before: owner=bob)\n');
    expect(await tagsOf('tag-c')).toEqual({});
  });

  it('writes nothing when the tags are already so', async () => {
    await store.checkpoint('tag-d', 1, { tags: { user: 'ann' } });
    const done = await run('tag', 'tag-d', 'user=ann', '--remove', 'absent');
    expect(done.stdout).toBe('tag-d: user=ann (already so; nothing written)\n');
    expect(JSON.parse((await run('tag', 'tag-d', 'user=ann', '--json')).stdout)).toMatchObject({
      changed: false,
    });
  });

  it('names a LangGraph thread with --thread, every word after it a tag', async () => {
    const thread = JSON.stringify(['thread-7', '']);
    await store.checkpoint(thread, 1);
    expect((await run('tag', '--thread', 'thread-7', 'user=ann')).code).toBe(0);
    expect(await tagsOf(thread)).toEqual({ user: 'ann' });
  });

  it('refuses a session that is not there (exit 3), creating nothing', async () => {
    const missing = await run('tag', 'nobody', 'user=ann');
    expect(missing.code).toBe(3);
    expect(missing.stderr).toMatch(/^ckpt: error NOT_FOUND: session "nobody" does not exist/);
    expect(await store.info('nobody')).toBeNull();
  });

  it.each([
    [['chat-1', 'user'], /^ckpt: error: a tag is key=value, such as user=ann, got "user"\.\n$/],
    [['chat-1', 'bad key=x'], /a tag key is 1 to 64/],
    [['chat-1', '--remove', 'bad key'], /a tag key is 1 to 64 .*got "bad key"/],
    [['chat-1', '--clear', 'user=ann'], /--clear removes every tag, and takes nothing else/],
    [['chat-1', '--replace'], /--replace needs the tags that make the whole set/],
    [['chat-1', '--replace', 'a=1', '--remove', 'b'], /--replace removes every tag not given/],
    [['chat-1', 'user=x', '--remove', 'user'], /the tag "user" is both set and removed/],
    [[], /missing the session/],
  ])('refuses tag %j as a usage error, changing nothing', async (args, message) => {
    const before = await tagsOf('chat-1');
    const refused = await run('tag', ...args);
    expect(refused.code).toBe(2);
    expect(refused.stderr).toMatch(message);
    expect(await tagsOf('chat-1')).toEqual(before);
  });
});

describe('export, import and copy', () => {
  it('carry the tags, and a session without tags stays without', async () => {
    const file = join(dir, 'tags.jsonl');
    expect((await run('export', '--out', file)).code).toBe(0);
    const sessionLines = readFileSync(file, 'utf8')
      .trim()
      .split('\n')
      .map((l) => JSON.parse(l))
      .filter((l) => l.type === 'session');
    expect(sessionLines.find((l) => l.sessionId === 'chat-4').tags).toEqual({
      note: 'on hold',
      status: 'open',
      user: 'ann',
    });
    expect(sessionLines.find((l) => l.sessionId === 'plain')).not.toHaveProperty('tags');

    const imported = `sqlite:${join(dir, 'imported.db')}`;
    const copied = `sqlite:${join(dir, 'copied.db')}`;
    expect((await ckpt(['--store', imported, 'import', file])).code).toBe(0);
    expect((await ckpt(['copy', '--from', url, '--to', copied])).code).toBe(0);
    const where = ['sessions', '--where', 'user=ann', '--all', '--json'];
    const source = JSON.parse((await run(...where)).stdout);
    for (const target of [imported, copied]) {
      expect(JSON.parse((await ckpt(['--store', target, ...where])).stdout)).toEqual(source);
      expect(
        JSON.parse((await ckpt(['--store', target, 'tag', 'plain', '--json'])).stdout),
      ).toEqual({ sessionId: 'plain', tags: {} });
    }
  });
});
