/**
 * The built `ckpt` executable, run as a child process against one backend a URL reaches: the
 * cases of each backend's test file (binary-<backend>.test.ts), one file a backend so that the
 * backends run side by side.
 */
import { mkdtempSync, readFileSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeReads } from '@ckpt/contract-tests';
import { type CheckpointStore, openStore } from '@ckpt/core';
import { emptyStore, URL_STORES } from '@ckpt/test-stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, ckpt } from './binary.js';
import { FILLED_IDS, FILLED_SCOPES, fill } from './store-fill.js';

/** JSON as the command prints it: dates as ISO text. */
const asPrinted = (value: unknown) => JSON.parse(JSON.stringify(value));
const ESCAPE = '\u001b[';

/** The command's cases on the backend named `name` (none when its server is not up). */
export function binaryCasesOn(name: string): void {
  const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-'));
  afterAll(() => rmSync(dir, { recursive: true, force: true }));
  beforeAll(buildCli, 300_000);
  describe.each(URL_STORES.filter((store) => store.name === name))('ckpt on $name', (backend) => {
    // Namespaces of this run alone: other runs may share the servers.
    const url = backend.url(`cli_bin_${process.pid}`, dir);
    const copyUrl = backend.url(`cli_bin_${process.pid}_copy`, dir);
    const scopes = [...FILLED_SCOPES, 'cli'];
    let store: CheckpointStore;
    let copy: CheckpointStore;
    const run = (...args: string[]) => ckpt(['--store', url, ...args]);

    beforeAll(async () => {
      store = await openStore(url);
      copy = await openStore(copyUrl);
      await emptyStore(store, scopes);
      await emptyStore(copy, scopes);
      await fill(store);
    });
    afterAll(async () => {
      await store.destroy();
      await copy.destroy();
    });

    it('lists the sessions, as a table and as JSON', async () => {
      const table = await run('sessions');
      expect(table.code).toBe(0);
      expect(table.stdout.split('\n')[0]).toMatch(/^SESSION\s+HEAD\s+CHECKPOINTS\s+UPDATED/);
      expect(table.stdout).not.toContain(ESCAPE);
      const listed = await run('sessions', '--json');
      expect(JSON.parse(listed.stdout)).toEqual(asPrinted(await store.sessions()));
      expect(
        JSON.parse(listed.stdout)
          .items.map((s: { sessionId: string }) => s.sessionId)
          .sort(),
      ).toEqual([...FILLED_IDS].sort());
    });

    it('lists only the sessions whose id starts with --prefix, and pages on within it', async () => {
      const listed = await run('sessions', '--prefix', 'main', '--json');
      expect(listed.code).toBe(0);
      expect(JSON.parse(listed.stdout)).toEqual(
        asPrinted(await store.sessions({ prefix: 'main' })),
      );
      expect(
        JSON.parse(listed.stdout)
          .items.map((s: { sessionId: string }) => s.sessionId)
          .sort(),
      ).toEqual(['main', 'main-fork']);
      const first = await run('sessions', '--prefix', 'main', '--limit', '1');
      const more = / sessions --prefix main --limit 1 --cursor (\S+)$/m.exec(first.stderr);
      expect(more, first.stderr).not.toBeNull();
      const next = await run('sessions', '--prefix', 'main', '--cursor', more![1]!, '--json');
      expect(JSON.parse(next.stdout)).toMatchObject({ items: [expect.anything()], cursor: null });
      const elsewhere = await run('sessions', '--cursor', more![1]!);
      expect(elsewhere.code).not.toBe(0);
      expect(elsewhere.stderr).toMatch(/^ckpt: error INVALID_ARGUMENT: cursor was not produced/);
      const quoted = await run('sessions', '--prefix', "it's", '--limit', '1');
      expect(quoted.stdout).toContain("it's");
      expect(
        (await run('sessions', '--prefix', 'nobody', '--json')).stdout.replace(/\s/g, ''),
      ).toBe('{"items":[],"cursor":null}');
    });

    it('draws the tree: the head, the active timeline, branches, a pruned parent and a fork', async () => {
      const { code, stdout } = await run('tree', 'main');
      expect(code).toBe(0);
      const lines = stdout.trimEnd().split('\n');
      expect(lines[0]).toBe('main · head 7 · 3 checkpoints');
      expect(lines.slice(1)).toEqual([
        expect.stringMatching(/^○ 5 .*parent 4 pruned {2}forked to "main-fork"$/),
        expect.stringMatching(/^○ 6 /),
        expect.stringMatching(/^◉ 7 .*parent 3 pruned$/),
      ]);
      const json = JSON.parse((await run('tree', 'main', '--json')).stdout);
      expect(
        json.checkpoints.map((n: { seq: number; active: boolean; head: boolean }) => [
          n.seq,
          n.active,
          n.head,
        ]),
      ).toEqual([
        [5, false, false],
        [6, false, false],
        [7, true, true],
      ]);
      const fork = (await run('tree', 'main-fork')).stdout.trimEnd().split('\n');
      expect(fork).toEqual([
        'main-fork · head 6 · 7 checkpoints · forked from "main" at 5',
        expect.stringMatching(/^● 1 /),
        expect.stringMatching(/^● 2 /),
        expect.stringMatching(/^● 3 /),
        expect.stringMatching(/^● 4 /),
        expect.stringMatching(/^├─ ● 5 /),
        expect.stringMatching(/^│ {2}◉ 6 .* head$/),
        expect.stringMatching(/^└─ ○ 7 /),
      ]);
    });

    it('shows a session, its transcript and its history as the store gives them', async () => {
      const show = JSON.parse((await run('show', 'main-fork', '--json')).stdout);
      expect(show).toEqual(
        asPrinted({
          sessionId: 'main-fork',
          info: await store.info('main-fork'),
          checkpoint: await store.load('main-fork'),
          transcript: [],
        }),
      );
      const three = JSON.parse((await run('show', 'main-fork', '--seq', '3', '--json')).stdout);
      expect(three.checkpoint).toEqual(asPrinted(await store.load('main-fork', 3)));
      expect(three.transcript).toEqual(['said 3', { i: 3 }]);
      // Checkpoint 7 is off the active timeline: its items are found all the same.
      expect(
        JSON.parse((await run('show', 'main-fork', '--seq', '7', '--json')).stdout).transcript,
      ).toEqual([]);
      expect(
        JSON.parse((await run('show', 'main', '--seq', '7', '--json')).stdout).transcript,
      ).toEqual(['branch']);
      expect((await run('show', 'main-fork', '--seq', '3')).stdout).toMatch(
        /\ntranscript\n {2}said 3\n {2}\{"i":3\}\n$/,
      );
      const transcript = JSON.parse((await run('transcript', 'main-fork', '--json')).stdout);
      expect(transcript).toEqual(
        asPrinted({ sessionId: 'main-fork', ...(await store.transcript('main-fork')) }),
      );
      const tree = JSON.parse((await run('tree', 'main-fork', '--json')).stdout);
      expect(tree).toMatchObject(
        asPrinted({ sessionId: 'main-fork', info: await store.info('main-fork') }),
      );
      const history = JSON.parse((await run('history', 'main-fork', '--json')).stdout);
      expect(history.map((cp: { seq: number }) => cp.seq)).toEqual(
        await store.history('main-fork'),
      );
      const text = await run('transcript', 'main-fork');
      expect(text.stdout.split('\n').slice(1, 3)).toEqual([
        expect.stringMatching(/^1 .* said 1$/),
        expect.stringMatching(/^1 .* \{"i":1\}$/),
      ]);
    });

    it('rolls back, forks, prunes, and deletes only when told to', async () => {
      expect((await run('rollback', 'main', '6')).stdout).toBe('main: head moved from 7 to 6\n');
      expect(await store.head('main')).toBe(6);
      expect((await run('rollback', 'main', '7', '--expect-head', '5')).code).toBe(4);
      expect((await run('rollback', 'main', '7')).code).toBe(0);
      expect((await run('fork', 'main', '--at', '6', '--new-id', 'scratch')).stdout).toBe(
        'scratch\n',
      );
      expect(await store.history('scratch')).toEqual([5, 6]);
      expect((await run('prune', 'scratch', '--keep-last', '1')).stdout).toBe(
        'scratch: removed 1 checkpoint\n',
      );
      const refused = await run('delete', 'scratch');
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(/pass --yes/);
      expect(await store.info('scratch')).not.toBeNull();
      expect((await run('delete', 'scratch', '--yes')).stdout).toBe('scratch: deleted\n');
      expect(await store.info('scratch')).toBeNull();
    });

    it('pins and unpins, shows pins in tree and history, prunes by age, and sweeps idle sessions but not pinned ones', async () => {
      const old = (sessionId: string) =>
        store.importSession({
          sessionId,
          head: 3,
          forkedFrom: null,
          createdAt: new Date(1_000),
          updatedAt: new Date(2_000),
          checkpoints: [1, 2, 3].map((seq) => ({
            seq,
            parent: seq === 1 ? null : seq - 1,
            data: seq,
            metadata: {},
            transcript: [],
            createdAt: new Date(seq * 1_000),
          })),
        });
      await old('idle-plain');
      await old('idle-pinned');
      const pinned = await run('pin', 'idle-pinned', '1', '--note', 'keep me');
      expect(pinned.stdout).toBe('idle-pinned: pinned 1\n');
      // The note is `pinNote` in every JSON output, as in tree and history; a pin without
      // --note keeps it.
      expect(JSON.parse((await run('pin', 'idle-pinned', '1', '--json')).stdout)).toEqual({
        sessionId: 'idle-pinned',
        seq: 1,
        pinned: true,
        pinNote: 'keep me',
        changed: false,
      });
      const tree = (await run('tree', 'idle-pinned')).stdout.trimEnd().split('\n');
      expect(tree[1]).toMatch(/^● 1 .* {2}pinned: "keep me"$/);
      expect(tree[2]).not.toMatch(/pinned/);
      const history = JSON.parse((await run('history', 'idle-pinned', '--json')).stdout);
      expect(history.map((cp: { pinned: boolean; pinNote: string | null }) => cp.pinNote)).toEqual([
        'keep me',
        null,
        null,
      ]);
      expect((await run('history', 'idle-pinned')).stdout).toMatch(
        /^1 +1970-01-01 00:00:01Z +pinned: "keep me" +\{\}$/m,
      );

      // No time at all is a slip (every session is idle that long): refused, nothing removed.
      for (const [option, zero] of [
        ['--idle', '0s'],
        ['--older-than', '0d'],
      ] as const) {
        const refused = await run('sweep', option, zero);
        expect(refused.code).toBe(2);
        expect(refused.stderr).toMatch(
          new RegExp(
            `^ckpt: error: option '${option} <duration>' argument '${zero}' is invalid\\. ${option.slice(2)} must be more than zero, such as 30d or 12h, got "${zero}"\\. \\(run ckpt sweep --help for its usage\\)\\n$`,
          ),
        );
      }
      expect((await run('prune', 'idle-plain', '--older-than', '0ms')).code).toBe(2);
      expect((await store.list('idle-plain')).items).toHaveLength(3);
      expect(
        (await run('prune', 'idle-plain', '--older-than', '3650d', '--keep-last', '2')).stdout,
      ).toBe('idle-plain: removed 1 checkpoint\n');
      const sweep = ['sweep', '--idle', '30d', '--keep-last', '1', '--older-than', '3650d'];
      const dry = await run(...sweep, '--dry-run', '--json');
      expect(JSON.parse(dry.stdout)).toEqual({
        sessions: 1,
        checkpoints: 2 + 1,
        walked: expect.any(Number),
        dryRun: true,
      });
      expect(await store.info('idle-plain')).not.toBeNull();
      const swept = await run(...sweep);
      expect(swept.code).toBe(0);
      expect(swept.stderr).toMatch(
        /^deleted 1 idle session and removed 3 checkpoints in all, looking at \d+ sessions in [\d.]+ s\n$/,
      );
      expect(await store.info('idle-plain')).toBeNull();
      expect((await store.list('idle-pinned')).items.map((cp) => cp.seq)).toEqual([3, 1]);
      for (const id of FILLED_IDS) expect(await store.info(id)).not.toBeNull();

      expect((await run('unpin', 'idle-pinned', '1')).stdout).toBe('idle-pinned: unpinned 1\n');
      expect((await run('unpin', 'idle-pinned', '1')).stdout).toBe(
        'idle-pinned: 1 was not pinned\n',
      );
      expect(JSON.parse((await run('unpin', 'idle-pinned', '1', '--json')).stdout)).toMatchObject({
        pinned: false,
        pinNote: null,
        changed: false,
      });
      expect(JSON.parse((await run('sweep', '--idle', '30d', '--json')).stdout)).toMatchObject({
        sessions: 1,
        checkpoints: 2,
      });
      expect(await store.info('idle-pinned')).toBeNull();

      const missing = await run('pin', 'nobody', '1');
      expect(missing.code).toBe(3);
      expect(missing.stderr).toMatch(/NOT_FOUND/);
      const none = await run('sweep');
      expect(none.code).toBe(2);
      expect(none.stderr).toMatch(/--idle, --keep-last, --older-than/);
      const bare = await run('sweep', '--idle', '30');
      expect(bare.code).toBe(2);
      expect(bare.stderr).toMatch(/30d/);
    });

    it('reads and writes state', async () => {
      expect((await run('state', 'cli', 'set', 'theme', '"dark"')).code).toBe(0);
      expect((await run('state', 'cli', 'set', 'n', '{"a":[1,2]}')).code).toBe(0);
      expect((await run('state', 'cli', 'get', 'n')).stdout).toBe('{"a":[1,2]}\n');
      expect(await store.state('cli').get('theme')).toBe('dark');
      expect((await run('state', 'cli', 'keys')).stdout).toBe('n\ntheme\n');
      expect(
        JSON.parse((await run('state', 'cli', 'keys', '--prefix', 't', '--json')).stdout).items,
      ).toEqual(['theme']);
      const notJson = await run('state', 'cli', 'set', 'x', 'dark');
      expect(notJson.code).toBe(5);
      expect(notJson.stderr).toMatch(/must be JSON.*'"dark"'/);
      expect((await run('state', 'cli', 'delete', 'n')).stdout).toBe('cli: n deleted\n');
      expect((await run('state', 'cli', 'get', 'n')).code).toBe(3);
      await store.state('cli').delete('theme');
    });

    // The export the tests below write and import again.
    const file = join(dir, `${backend.name}.jsonl`);
    const importSkipping = () =>
      ckpt(['--store', copyUrl, 'import', file, '--if-exists', 'skip', '--json']);

    it('exports to a file and imports it elsewhere: every read the same', async () => {
      const exported = await run('export', '--out', file);
      expect(exported.code).toBe(0);
      expect(exported.stderr).toMatch(
        /^exported 7 sessions, \d+ checkpoints and 6 state values in [\d.]+ s\n$/,
      );
      const imported = await ckpt(['--store', copyUrl, 'import', file, '--json']);
      expect(imported.code).toBe(0);
      expect(JSON.parse(imported.stdout)).toMatchObject({ sessions: 7, state: 6, skipped: 0 });
      expect(await storeReads(copy)).toEqual(await storeReads(store));
      // Again: every session is there, so the import refuses; with skip it passes them over.
      const again = await ckpt(['--store', copyUrl, 'import', file]);
      expect(again.code).toBe(4);
      const skipped = await importSkipping();
      expect(JSON.parse(skipped.stdout)).toEqual({
        sessions: 0,
        checkpoints: 0,
        state: 0,
        skipped: 7,
      });
    });

    it('refuses to import a session that is there, saying to pass --if-exists skip or replace', async () => {
      const refused = await ckpt(['--store', copyUrl, 'import', file]);
      expect(refused.code).toBe(4);
      expect(refused.stderr).toMatch(
        /^ckpt: error CONFLICT: export line \d+: session ".*" is already in the store, so nothing of it was written\. Run the same command again with --if-exists skip .* or with --if-exists replace to overwrite them\.\n$/,
      );
      expect(refused.stderr).not.toContain('ifExists');
      const copied = await ckpt(['copy', '--from', url, '--to', copyUrl]);
      expect(copied.code).toBe(4);
      expect(copied.stderr).toMatch(
        /is already in the target store.*--if-exists skip.*--if-exists replace/,
      );
    });

    it('keeps the state values the target holds with --if-exists skip, on import and on copy', async () => {
      await copy.state('prefs').set('k', 'the target own');
      await copy.state('prefs').delete('b');
      const imported = await importSkipping();
      expect(imported.code).toBe(0);
      expect(JSON.parse(imported.stdout)).toEqual({
        sessions: 0,
        checkpoints: 0,
        state: 1,
        skipped: 7,
      });
      expect(await copy.state('prefs').get('k')).toBe('the target own');
      expect(await copy.state('prefs').get('b')).toEqual([1, 2]);
      await copy.state('a:b').set('k', 'kept too');
      const copied = await ckpt(['copy', '--from', url, '--to', copyUrl, '--if-exists', 'skip']);
      expect(copied.code).toBe(0);
      expect(copied.stderr).toMatch(
        /^copied 0 sessions, 0 checkpoints and 0 state values in [\d.]+ s \(7 sessions already there, skipped\)\n$/,
      );
      expect(await copy.state('a:b').get('k')).toBe('kept too');
      // Replace writes them all.
      expect(
        (await ckpt(['--store', copyUrl, 'import', file, '--if-exists', 'replace'])).code,
      ).toBe(0);
      expect(await storeReads(copy)).toEqual(await storeReads(store));
    });

    it('refuses a malformed export naming the line, writing nothing of that session', async () => {
      const lines = readFileSync(file, 'utf8').split('\n');
      const at = lines.findIndex((l) => l.includes('"sessionId":"main-fork"'));
      lines[at + 2] = lines[at + 2]!.slice(0, 30);
      const broken = join(dir, `${backend.name}-broken.jsonl`);
      writeFileSync(broken, lines.join('\n'));
      await emptyStore(copy, scopes);
      const refused = await ckpt(['--store', copyUrl, 'import', broken]);
      expect(refused.code).toBe(5);
      expect(refused.stderr).toBe(
        `ckpt: error INVALID_ARGUMENT: export line ${at + 3} is not JSON (${refused.stderr.match(/is not JSON \((.*)\)\.\n$/)![1]}).\n`,
      );
      expect(await copy.info('main-fork')).toBeNull();
    });

    it('copies between two stores given as URLs', async () => {
      await emptyStore(copy, scopes);
      const copied = await ckpt(['copy', '--from', url, '--to', copyUrl]);
      expect(copied.code).toBe(0);
      expect(copied.stderr).toMatch(/^copied 7 sessions, \d+ checkpoints and 6 state values/);
      expect(await storeReads(copy)).toEqual(await storeReads(store));
    });

    it('names a LangGraph thread with --thread (and --ns) on every command that takes a session', async () => {
      const thread = JSON.stringify(['thread 1', '']);
      const sub = JSON.stringify(['thread 1', 'sub']);
      await store.checkpoint(thread, { n: 1 }, { transcript: [{ role: 'user', text: 'hi' }] });
      await store.checkpoint(
        thread,
        { n: 2, list: [1] },
        { transcript: [{ role: 'assistant', text: 'hello' }] },
      );
      await store.checkpoint(sub, { sub: true });
      try {
        const transcript = await run('transcript', '--thread', 'thread 1');
        expect(transcript.code).toBe(0);
        expect(transcript.stdout.split('\n').slice(1, 3)).toEqual([
          expect.stringMatching(/^1 .* user: hi$/),
          expect.stringMatching(/^2 .* assistant: hello$/),
        ]);
        expect(
          JSON.parse((await run('show', '--thread', 'thread 1', '--ns', 'sub', '--json')).stdout)
            .checkpoint.data,
        ).toEqual({ sub: true });
        expect((await run('tree', '--thread', 'thread 1')).stdout).toMatch(
          /^\["thread 1",""\] · head 2 · 2 checkpoints\n/,
        );
        expect(
          JSON.parse((await run('history', '--thread', 'thread 1', '--json')).stdout).map(
            (cp: { seq: number }) => cp.seq,
          ),
        ).toEqual([1, 2]);
        expect(
          JSON.parse((await run('diff', '--thread', 'thread 1', '1', '2', '--json')).stdout),
        ).toEqual([
          { path: 'data.n', op: 'change', before: 1, after: 2 },
          { path: 'data.list', op: 'add', after: [1] },
        ]);
        expect((await run('rollback', '--thread', 'thread 1', '1')).code).toBe(0);
        expect(await store.head(thread)).toBe(1);
        expect((await run('rollback', '--thread', 'thread 1', '2')).code).toBe(0);
        const exported = await run('export', '--thread', 'thread 1', '--ns', 'sub');
        expect(exported.stdout).toContain(`"sessionId":${JSON.stringify(sub)}`);
        expect(exported.stdout).not.toContain(`"sessionId":${JSON.stringify(thread)}`);
        expect((await run('prune', '--thread', 'thread 1', '--keep-last', '1')).stdout).toBe(
          `${thread}: removed 1 checkpoint\n`,
        );
        expect(
          JSON.parse(
            (await run('fork', '--thread', 'thread 1', '--new-id', 'of-thread', '--json')).stdout,
          ),
        ).toMatchObject({ forkedFrom: { sessionId: thread } });
        expect((await run('delete', '--thread', 'thread 1', '--ns', 'sub', '--yes')).code).toBe(0);
        expect(await store.info(sub)).toBeNull();
        // A thread's id given as a session id: the message says to use --thread.
        const plain = await run('show', 'thread 1');
        expect(plain.code).toBe(3);
        expect(plain.stderr).toBe(
          `ckpt: error NOT_FOUND: session "thread 1" does not exist; a LangGraph thread has that id: give --thread 'thread 1'\n`,
        );
        // prune too: a thread's id given as a session id removes nothing and says so.
        const prunedPlain = await run('prune', 'thread 1', '--keep-last', '1');
        expect(prunedPlain.code).toBe(3);
        expect(prunedPlain.stderr).toBe(
          `ckpt: error NOT_FOUND: session "thread 1" does not exist; a LangGraph thread has that id: give --thread 'thread 1'\n`,
        );
        const none = await run('show', '--thread', 'nobody');
        expect(none.code).toBe(3);
        expect(none.stderr).toMatch(/^ckpt: error NOT_FOUND: thread "nobody" does not exist/);
      } finally {
        await store.delete(thread);
        await store.delete(sub);
        await store.delete('of-thread');
      }
    });

    it('prints what changed between two checkpoints, as paths, and as JSON', async () => {
      const json = await run('diff', 'main-fork', '1', '2', '--json');
      expect(json.code).toBe(0);
      expect(JSON.parse(json.stdout)).toEqual([
        { path: 'data.step', op: 'change', before: 1, after: 2 },
        { path: 'metadata.step', op: 'change', before: 1, after: 2 },
      ]);
      expect((await run('diff', 'main-fork', '4', '7')).stdout).toBe(
        'main-fork 4 → 7: 2 changes\n~ data  {"step":4,"odd":{"__proto__":{"x":1},"z":0,"a":1}} → "another way"\n- metadata.step  4\n',
      );
      expect((await run('diff', 'main-fork', '2', '2')).stdout).toBe(
        'main-fork 2 → 2: the same data and metadata\n',
      );
      const missing = await run('diff', 'main-fork', '1', '99');
      expect(missing.code).toBe(3);
      expect(missing.stderr).toMatch(
        /session "main-fork" has no stored checkpoint 99; see its checkpoints with: ckpt --store .* tree main-fork/,
      );
      expect((await run('diff', 'main-fork', '1')).code).toBe(2);
    });

    it('says what it found with doctor, and exits 0 when nothing is wrong', async () => {
      const found = await run('doctor', '--json');
      expect(found.code).toBe(0);
      const checks = JSON.parse(found.stdout) as { check: string; status: string }[];
      expect(checks[0]).toMatchObject({ check: 'reachable', status: 'ok' });
      expect(checks[1]).toMatchObject({
        check: 'contents',
        status: 'ok',
        detail: expect.stringMatching(/^7 sessions, \d+ checkpoints, 3 state scopes$/),
      });
      expect(checks.map((c) => c.check)).toContain('durability');
      expect(checks.every((c) => c.status !== 'fail')).toBe(true);
    });

    it('gives what to do (fix) only for a doctor check that did not pass', async () => {
      const checks = JSON.parse((await run('doctor', '--json')).stdout) as { status: string }[];
      expect(checks.filter((c) => c.status === 'ok' && 'fix' in c)).toEqual([]);
    });

    it('fails in one line with the code, what to do, and a documented exit status', async () => {
      const missing = await run('show', 'nobody');
      expect(missing).toEqual({
        code: 3,
        stdout: '',
        stderr:
          'ckpt: error NOT_FOUND: session "nobody" does not exist; list the sessions with: ckpt sessions\n',
      });
      expect(await run('prune', 'nobody', '--keep-last', '1')).toEqual({ ...missing, stdout: '' });
      const badSeq = await run('show', 'main', '--seq', 'x');
      expect(badSeq.code).toBe(2);
      expect(badSeq.stderr).toMatch(/seq must be a whole number/);
    });
  });
}
