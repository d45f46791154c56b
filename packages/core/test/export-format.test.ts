/** The export format: a whole store out as JSON Lines and back, and malformed exports refused by line. */
import { sessionReads, stateReads } from '@ckpt/contract-tests';
import { memory } from '@ckpt/memory';
import { describe, expect, it } from 'vitest';
import {
  CheckpointStore,
  copyStore,
  EXPORT_FORMAT,
  EXPORT_VERSION,
  exportStore,
  importStore,
  isCkptError,
} from '../src/index.js';

/** A store with branches, a fork, a pruned session, odd ids and state. */
async function filled(): Promise<CheckpointStore> {
  const store = new CheckpointStore(memory());
  for (let i = 1; i <= 5; i++) {
    await store.checkpoint('main', { i }, { metadata: { i }, transcript: [`said ${i}`] });
  }
  await store.rollback('main', 2);
  await store.checkpoint('main', { branch: true });
  await store.fork('main', { atSeq: 4, newId: 'forked' });
  await store.prune('main', { keepLast: 2 });
  await store.checkpoint('a:b {c} ü 🦜\n', JSON.parse('{"__proto__":1,"z":[]}'));
  await store.state('prefs').set('theme', { dark: true });
  await store.state('é').set('k', [1, 2]);
  return store;
}

const ids = ['main', 'forked', 'a:b {c} ü 🦜\n'];

async function linesOf(store: CheckpointStore): Promise<string[]> {
  const out: string[] = [];
  for await (const line of exportStore(store)) out.push(line);
  return out;
}

async function everything(store: CheckpointStore) {
  const sessions = [];
  for (const id of ids) sessions.push(await sessionReads(store, id));
  return { sessions, state: await stateReads(store), listed: (await store.sessions()).items };
}

const code = async (p: Promise<unknown>) =>
  p.then(
    () => 'ok',
    (err: unknown) => (isCkptError(err) ? `${err.code}: ${err.message}` : String(err)),
  );

describe('export format', () => {
  it('writes a header, each session followed by its checkpoints, the state and an end line', async () => {
    const lines = await linesOf(await filled());
    expect(lines.every((l) => l.endsWith('\n') && !l.slice(0, -1).includes('\n'))).toBe(true);
    const parsed = lines.map((l) => JSON.parse(l));
    expect(parsed[0]).toMatchObject({
      type: 'header',
      format: EXPORT_FORMAT,
      version: EXPORT_VERSION,
    });
    // Each session line is followed by as many checkpoint lines as it says, seq ascending.
    const types = parsed.map((p) => p.type);
    expect(types.filter((t) => t === 'session')).toHaveLength(3);
    for (const [i, p] of parsed.entries()) {
      if (p.type !== 'session') continue;
      const cps = parsed.slice(i + 1, i + 1 + p.checkpoints);
      expect(cps.every((c) => c.type === 'checkpoint')).toBe(true);
      expect(cps.map((c) => c.seq)).toEqual([...cps.map((c) => c.seq)].sort((a, b) => a - b));
    }
    expect(types.slice(-3)).toEqual(['state', 'state', 'end']);
    expect(parsed.at(-1)).toEqual({ type: 'end', sessions: 3, checkpoints: 7, state: 2 });
    expect(parsed[2].createdAt).toMatch(/^\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z$/);
  });

  it('reads an export back into another store so that every read answers the same', async () => {
    const source = await filled();
    const target = new CheckpointStore(memory());
    const counts = await importStore(target, await linesOf(source));
    expect(counts).toEqual({ sessions: 3, checkpoints: 7, state: 2, skipped: 0 });
    expect(await everything(target)).toEqual(await everything(source));
  });

  it('opens a store given as a function only once the header is read and checked', async () => {
    const lines = await linesOf(await filled());
    let opened = 0;
    const target = new CheckpointStore(memory());
    const open = async () => {
      opened++;
      return target;
    };
    for (const notAnExport of [[], ['{"type":"end"}'], ['not json']]) {
      await expect(importStore(open, notAnExport)).rejects.toMatchObject({
        code: 'INVALID_ARGUMENT',
      });
    }
    expect(opened).toBe(0);
    const counts = await importStore(open, lines);
    expect(opened).toBe(1);
    expect(counts).toEqual({ sessions: 3, checkpoints: 7, state: 2, skipped: 0 });
  });

  it('copies a whole store into another, several sessions at a time', async () => {
    const source = await filled();
    const target = new CheckpointStore(memory());
    const seen: number[] = [];
    const counts = await copyStore(source, target, {
      concurrency: 2,
      onProgress: (c) => seen.push(c.sessions),
    });
    expect(counts).toEqual({ sessions: 3, checkpoints: 7, state: 2, skipped: 0 });
    expect(seen).toContain(3);
    expect(await everything(target)).toEqual(await everything(source));
    // Again, with skip: nothing changes.
    const again = await copyStore(source, target, { ifExists: 'skip' });
    expect(again).toMatchObject({ sessions: 0, skipped: 3 });
  });

  describe('needs', () => {
    /** A session whose checkpoint 3 needs 1, and 4 needs 1 and 3. */
    async function needing(): Promise<CheckpointStore> {
      const store = new CheckpointStore(memory());
      await store.checkpoint('s', { value: 1 });
      await store.checkpoint('s', 2);
      await store.checkpoint('s', 3, { needs: [1] });
      await store.checkpoint('s', 4, { needs: [3, 1] });
      return store;
    }
    const needsOf = async (store: CheckpointStore) => {
      const out: [number, number[] | undefined][] = [];
      for await (const cp of (await store.exportSession('s'))!.checkpoints)
        out.push([cp.seq, cp.needs]);
      return out;
    };
    const want = [
      [1, undefined],
      [2, undefined],
      [3, [1]],
      [4, [1, 3]],
    ];

    it('writes needs on the lines of the checkpoints that need others, and reads them back', async () => {
      const lines = await linesOf(await needing());
      const checkpoints = lines.map((l) => JSON.parse(l)).filter((p) => p.type === 'checkpoint');
      expect(checkpoints.map((c) => c.needs)).toEqual(want.map(([, needs]) => needs));
      expect(Object.keys(checkpoints[0])).not.toContain('needs');
      const target = new CheckpointStore(memory());
      await importStore(target, lines);
      expect(await needsOf(target)).toEqual(want);
      expect(await target.prune('s', { keepLast: 1 })).toBe(1);
      expect((await target.load('s', 1))?.data).toEqual({ value: 1 });
    });

    it('copies needs with copyStore', async () => {
      const target = new CheckpointStore(memory());
      await copyStore(await needing(), target);
      expect(await needsOf(target)).toEqual(want);
    });

    /** An export of session "s" in format `version`, its checkpoints' lines as `extra` says. */
    const exportOf = (version: number, extra: Record<number, string>) => {
      const at = '2026-12-05T10:00:00.000Z';
      const seqs = [1, 2, 3, 4, 5];
      return [
        `{"type":"header","format":"${EXPORT_FORMAT}","version":${version},"exportedAt":"${at}"}`,
        `{"type":"session","sessionId":"s","head":5,"forkedFrom":null,"createdAt":"${at}","updatedAt":"${at}","checkpoints":5}`,
        ...seqs.map(
          (seq) =>
            `{"type":"checkpoint","seq":${seq},"parent":${seq === 1 ? null : seq - 1},"createdAt":"${at}","metadata":{},"transcript":["item ${seq}"],"data":${seq}${extra[seq] ?? ''}}`,
        ),
        '{"type":"end","sessions":1,"checkpoints":5,"state":0}',
      ];
    };

    it('reads a version 2 line without needs as needing none', async () => {
      const target = new CheckpointStore(memory());
      await importStore(target, exportOf(2, { 4: ',"needs":[2]' }));
      expect(await needsOf(target)).toEqual([
        [1, undefined],
        [2, undefined],
        [3, undefined],
        [4, [2]],
        [5, undefined],
      ]);
      expect(await target.prune('s', { keepLast: 1 })).toBe(4);
    });

    it('keeps everything before a checkpoint of a version 1 export whose line names no needs', async () => {
      // Such a line may come from a store that did not record what its checkpoints need.
      const target = new CheckpointStore(memory());
      await importStore(target, exportOf(1, { 4: ',"needs":[2]' }));
      expect(await needsOf(target)).toEqual([
        [1, undefined],
        [2, [1]],
        [3, [2]],
        [4, [2]],
        [5, [3, 4]],
      ]);
      expect(await target.prune('s', { keepLast: 1 })).toBe(0);
      const items = await target.transcript('s', { limit: 10 });
      expect(items.items.map((e) => e.item)).toEqual([5, 4, 3, 2, 1].map((n) => `item ${n}`));
    });

    it('refuses bad needs on a line, naming the line, and writes nothing of that session', async () => {
      const lines = await linesOf(await needing());
      const n = lines.findIndex((l) => l.includes('"needs":[1]'));
      lines[n] = lines[n]!.replace('"needs":[1]', '"needs":[0]');
      const target = new CheckpointStore(memory());
      expect(await code(importStore(target, lines))).toMatch(
        new RegExp(
          `^INVALID_ARGUMENT: export line ${n + 1}: session\\.checkpoints\\[2\\]\\.needs\\[0\\] must be`,
        ),
      );
      expect(await target.info('s')).toBeNull();
    });
  });

  describe('tags', () => {
    /** A store whose "ann" has tags (one with '=' and ':' in it) and whose "plain" has none. */
    async function tagged(): Promise<CheckpointStore> {
      const store = new CheckpointStore(memory());
      await store.checkpoint('ann', 1, { tags: { user: 'ann', 'a:b': 'c=d ü' } });
      await store.checkpoint('ann', 2);
      await store.checkpoint('plain', 1);
      return store;
    }
    const sessionLines = (lines: string[]) =>
      lines.map((l) => JSON.parse(l)).filter((p) => p.type === 'session');

    it('writes them on the line of a session that has some, and nowhere else', async () => {
      const [ann, plain] = sessionLines(await linesOf(await tagged())).sort((a, b) =>
        a.sessionId < b.sessionId ? -1 : 1,
      );
      expect(ann.tags).toEqual({ 'a:b': 'c=d ü', user: 'ann' });
      expect(Object.keys(plain)).not.toContain('tags');
    });

    it('reads them back, so that info, sessions and where answer as in the source', async () => {
      const source = await tagged();
      const target = new CheckpointStore(memory());
      await importStore(target, await linesOf(source));
      for (const id of ['ann', 'plain']) {
        expect(await target.info(id)).toEqual(await source.info(id));
      }
      const where = { where: { user: 'ann' } };
      expect((await target.sessions(where)).items).toEqual((await source.sessions(where)).items);
      expect((await target.info('plain'))?.tags).toEqual({});
    });

    it('replaces the tags of a session already there with those of the export', async () => {
      const target = new CheckpointStore(memory());
      await target.checkpoint('ann', 1, { tags: { user: 'bob', old: 'x' } });
      await importStore(target, await linesOf(await tagged()), { ifExists: 'replace' });
      expect((await target.info('ann'))?.tags).toEqual({ 'a:b': 'c=d ü', user: 'ann' });
      expect((await target.sessions({ where: { user: 'bob' } })).items).toEqual([]);
    });

    it('reads an export written before tags existed: its sessions have none', async () => {
      const at = '2026-12-05T10:00:00.000Z';
      const target = new CheckpointStore(memory());
      const counts = await importStore(target, [
        `{"type":"header","format":"${EXPORT_FORMAT}","version":2,"exportedAt":"${at}"}`,
        `{"type":"session","sessionId":"old","head":1,"forkedFrom":null,"createdAt":"${at}","updatedAt":"${at}","checkpoints":1}`,
        `{"type":"checkpoint","seq":1,"parent":null,"createdAt":"${at}","metadata":{},"transcript":[],"data":1}`,
        '{"type":"end","sessions":1,"checkpoints":1,"state":0}',
      ]);
      expect(counts).toMatchObject({ sessions: 1, checkpoints: 1 });
      expect((await target.info('old'))?.tags).toEqual({});
    });

    it('refuses a session with tags on a store without the tags capability, naming its line and id', async () => {
      const lines = await linesOf(await tagged());
      const n = lines.findIndex((l) => l.includes('"sessionId":"ann"'));
      // The memory backend without setTags: a backend written before tags.
      const target = new CheckpointStore(
        new Proxy(memory(), {
          get(backend, key) {
            if (key === 'setTags') return undefined;
            const value: unknown = Reflect.get(backend, key, backend);
            return typeof value === 'function' ? value.bind(backend) : value;
          },
        }),
      );
      expect(target.capabilities.tags).toBe(false);
      const err = await importStore(target, lines).catch((e: unknown) => e);
      expect(err).toMatchObject({
        code: 'UNSUPPORTED',
        details: { capability: 'tags', line: n + 1, sessionId: 'ann' },
      });
      expect(String(err)).toMatch(new RegExp(`export line ${n + 1}: .*tags`));
      expect(await target.info('ann')).toBeNull();
      // "plain" (written last, so exported first) has no tags: it went in as before.
      expect(n).toBeGreaterThan(lines.findIndex((l) => l.includes('"sessionId":"plain"')));
      expect((await target.info('plain'))?.head).toBe(1);
    });

    it('refuses bad tags on a session line, naming the line, and writes nothing of that session', async () => {
      const lines = await linesOf(await tagged());
      const n = lines.findIndex((l) => l.includes('"sessionId":"ann"'));
      for (const bad of ['"tags":["user"]', '"tags":{"no spaces":"x"}', '"tags":{"user":1}']) {
        const spoilt = lines.map((l, i) => (i === n ? l.replace(/"tags":\{[^}]*\}/, bad) : l));
        const target = new CheckpointStore(memory());
        expect(await code(importStore(target, spoilt))).toMatch(
          new RegExp(`^INVALID_ARGUMENT: export line ${n + 1}: session\\.tags`),
        );
        expect(await target.info('ann')).toBeNull();
      }
    });

    it('carries them with copyStore', async () => {
      const target = new CheckpointStore(memory());
      await copyStore(await tagged(), target);
      expect((await target.info('ann'))?.tags).toEqual({ 'a:b': 'c=d ü', user: 'ann' });
    });
  });

  describe("with ifExists: 'skip'", () => {
    /** A target that already holds session "main" and a state value of its own. */
    async function holding(): Promise<CheckpointStore> {
      const target = new CheckpointStore(memory());
      await target.checkpoint('main', { mine: true });
      await target.state('prefs').set('theme', 'mine');
      return target;
    }

    it('an import keeps the state values the store already holds and writes the others', async () => {
      const target = await holding();
      const counts = await importStore(target, await linesOf(await filled()), {
        ifExists: 'skip',
      });
      expect(await target.state('prefs').get('theme')).toBe('mine');
      expect(await target.state('é').get('k')).toEqual([1, 2]);
      expect(counts.state).toBe(1);
    });

    it('a copy keeps the state values the target already holds and writes the others', async () => {
      const target = await holding();
      const counts = await copyStore(await filled(), target, { ifExists: 'skip' });
      expect(await target.state('prefs').get('theme')).toBe('mine');
      expect(await target.state('é').get('k')).toEqual([1, 2]);
      expect(counts.state).toBe(1);
    });

    it('an import counts neither the sessions nor the checkpoints it skipped as imported', async () => {
      const target = await holding();
      const counts = await importStore(target, await linesOf(await filled()), {
        ifExists: 'skip',
      });
      // "main" (3 checkpoints after its prune) was skipped; "forked" (4) and the odd id (1) came.
      expect(counts).toEqual({ sessions: 2, checkpoints: 5, state: 1, skipped: 1 });
      expect(await target.load('main')).toMatchObject({ seq: 1, data: { mine: true } });
    });

    it('a copy counts neither the sessions nor the checkpoints it skipped as copied', async () => {
      const target = await holding();
      const counts = await copyStore(await filled(), target, { ifExists: 'skip' });
      expect(counts).toEqual({ sessions: 2, checkpoints: 5, state: 1, skipped: 1 });
    });

    it('replace still overwrites the state values the store holds', async () => {
      const target = await holding();
      await importStore(target, await linesOf(await filled()), { ifExists: 'replace' });
      expect(await target.state('prefs').get('theme')).toEqual({ dark: true });
    });
  });

  it('names the session that exists in the CONFLICT an import raises', async () => {
    const target = new CheckpointStore(memory());
    await target.checkpoint('forked', 1);
    const err = await importStore(target, await linesOf(await filled())).catch((e) => e);
    expect(err).toMatchObject({ code: 'CONFLICT', details: { sessionId: 'forked' } });
  });

  it('refuses an ifExists it does not know before writing anything', async () => {
    const target = new CheckpointStore(memory());
    const outcome = await code(
      importStore(target, await linesOf(await filled()), { ifExists: 'merge' as never }),
    );
    expect(outcome).toMatch(/^INVALID_ARGUMENT: ifExists must be 'fail', 'skip' or 'replace'/);
    expect((await target.sessions()).items).toEqual([]);
  });

  describe('stops when its signal is aborted', () => {
    it('a copy: the sessions in flight finish, no other starts, every one whole or absent', async () => {
      const source = await filled();
      const target = new CheckpointStore(memory());
      const controller = new AbortController();
      const outcome = await code(
        copyStore(source, target, {
          concurrency: 1,
          signal: controller.signal,
          onProgress: () => controller.abort(),
        }),
      );
      expect(outcome).toMatch(/AbortError/);
      const copied = (await target.sessions()).items.map((s) => s.sessionId);
      expect(copied).toHaveLength(1);
      expect(await sessionReads(target, copied[0]!)).toEqual(
        await sessionReads(source, copied[0]!),
      );
      expect(await stateReads(target)).toEqual(await stateReads(new CheckpointStore(memory())));
    });

    it('an import: before the next line, keeping the sessions imported so far', async () => {
      const source = await filled();
      const target = new CheckpointStore(memory());
      const controller = new AbortController();
      const outcome = await code(
        importStore(target, await linesOf(source), {
          signal: controller.signal,
          onProgress: () => controller.abort(),
        }),
      );
      expect(outcome).toMatch(/AbortError/);
      const imported = (await target.sessions()).items.map((s) => s.sessionId);
      expect(imported).toHaveLength(1);
      // Run again with skip, it takes up where it stopped.
      const rest = await importStore(target, await linesOf(source), { ifExists: 'skip' });
      expect(rest).toMatchObject({ sessions: 2, skipped: 1 });
      expect(await everything(target)).toEqual(await everything(source));
    });

    it('refuses a signal that is not an AbortSignal', async () => {
      const store = await filled();
      expect(await code(copyStore(store, store, { signal: {} as never }))).toMatch(
        /^INVALID_ARGUMENT: options.signal must be an AbortSignal/,
      );
    });
  });

  describe('refuses a malformed export naming the line, and writes nothing of that session', () => {
    // `f` is the index of the line of session "forked", whose 4 checkpoints follow it; line
    // numbers in messages count from 1.
    const spoilt: [string, (lines: string[], f: number) => string[], (f: number) => RegExp][] = [
      [
        'a bad header',
        (l) => ['{"type":"header","format":"other","version":1}', ...l.slice(1)],
        () => /line 1 is not a ckpt export header/,
      ],
      [
        'an unknown format version',
        (l) => [l[0]!.replace(`"version":${EXPORT_VERSION}`, '"version":99'), ...l.slice(1)],
        () => /line 1 is format version 99, newer than the 2.*upgrade/,
      ],
      [
        'a line that is not JSON',
        (l, f) => l.map((x, i) => (i === f + 2 ? '{"type":"checkpoint",' : x)),
        (f) => new RegExp(`line ${f + 3} is not JSON`),
      ],
      [
        'a bad value in a checkpoint',
        (l, f) =>
          l.map((x, i) => (i === f + 2 ? x.replace('"data":', '"data":{"n":1e999},"x":') : x)),
        (f) => new RegExp(`line ${f + 3}: .*checkpoints\\[1\\]\\.data`),
      ],
      [
        'a checkpoint too few',
        (l, f) => l.filter((_, i) => i !== f + 2),
        (f) =>
          new RegExp(
            `line ${f + 5} is a \\w+ line, but session "forked" \\(line ${f + 1}\\) announced 4 checkpoints and 3 came`,
          ),
      ],
      [
        'a cut-off end',
        (l, f) => l.slice(0, f + 3),
        (f) =>
          new RegExp(
            `line ${f + 4} is missing: the export ends inside session "forked" \\(line ${f + 1}\\)`,
          ),
      ],
      [
        'an unknown line type',
        (l) => [l[0]!, '{"type":"mystery"}', ...l.slice(1)],
        () => /line 2 has an unknown type "mystery"/,
      ],
    ];
    for (const [what, spoil, message] of spoilt) {
      it(`with ${what}`, async () => {
        const target = new CheckpointStore(memory());
        const lines = await linesOf(await filled());
        const f = lines.findIndex((l) => l.includes('"sessionId":"forked"'));
        const outcome = await code(importStore(target, spoil(lines, f)));
        expect(outcome).toMatch(/^INVALID_ARGUMENT: export /);
        expect(outcome).toMatch(message(f));
        // Whatever went wrong in "forked", none of it was written.
        expect(await target.info('forked')).toBeNull();
      });
    }

    it('refuses an export without its end line, keeping what came before', async () => {
      const lines = await linesOf(await filled());
      const target = new CheckpointStore(memory());
      const outcome = await code(importStore(target, lines.slice(0, -1)));
      expect(outcome).toMatch(
        new RegExp(`line ${lines.length} is missing: the export has no end line`),
      );
      expect((await target.sessions()).items).toHaveLength(3);
    });

    it('keeps the sessions before the broken line, so an import with skip takes up where it stopped', async () => {
      const source = await filled();
      const lines = await linesOf(source);
      const f = lines.findIndex((l) => l.includes('"sessionId":"forked"'));
      const target = new CheckpointStore(memory());
      await code(importStore(target, lines.slice(0, f + 3)));
      expect(await target.info('forked')).toBeNull();
      const before = (await target.sessions()).items.length;
      const counts = await importStore(target, lines, { ifExists: 'skip' });
      expect(counts).toMatchObject({ sessions: 3 - before, skipped: before });
      expect(await everything(target)).toEqual(await everything(source));
    });
  });
});
