/**
 * Tags through the command run in-process (`main`) on memory stores, where a test makes what
 * no URL opens: a store whose backend keeps no tags (one written before tags), for `import`
 * and `copy` to refuse a tagged session into; and another writer between `ckpt tag`'s read
 * and its write, which the command must not pass over in silence.
 */
import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, exportStore } from '@ckpt/core';
import { memory } from '@ckpt/memory';
import { afterAll, describe, expect, it } from 'vitest';
import { ckptInProcess } from './support/in-process.js';
import { lent, lentAround } from './support/lent-store.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-tags-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));

/** Run `ckpt` on `stores` by URL. */
const ckpt = (args: string[], stores: Record<string, CheckpointStore>) =>
  ckptInProcess(args, { open: async (url) => lent(stores[url]!) });

/** A memory store whose backend has no `setTags`: one written before tags. */
function withoutTags(): CheckpointStore {
  return new CheckpointStore(
    new Proxy(memory(), {
      get(backend, key) {
        if (key === 'setTags') return undefined;
        const value: unknown = Reflect.get(backend, key, backend);
        return typeof value === 'function' ? value.bind(backend) : value;
      },
    }),
  );
}

/** "ann" (tagged), then "plain" (no tags): "plain" is the newest, so it is exported first. */
async function tagged(): Promise<CheckpointStore> {
  const store = new CheckpointStore(memory());
  await store.checkpoint('ann', 1, { tags: { user: 'ann' } });
  await new Promise((resolve) => setTimeout(resolve, 2));
  await store.checkpoint('plain', 1);
  return store;
}

describe('a session with tags, into a store that cannot keep them', () => {
  it('import refuses it, naming its line and id, writes nothing of it, and says how to go on', async () => {
    const file = join(dir, 'tagged.jsonl');
    let text = '';
    for await (const line of exportStore(await tagged())) text += line;
    writeFileSync(file, text);
    const line = text.split('\n').findIndex((l) => l.includes('"sessionId":"ann"')) + 1;
    const target = withoutTags();
    const run = await ckpt(['--store', 'memory:to', 'import', file], { 'memory:to': target });
    expect(run.code).toBe(6);
    expect(run.stderr).toBe(
      `ckpt: error UNSUPPORTED: export line ${line}: session "ann" has tags, which the target store cannot keep: its backend (memory) has no 'tags' capability, as one written before tags. Nothing of that session was written; the sessions before it were, each whole. Upgrade the target's adapter to one that keeps tags, then take up where this stopped: ckpt --store memory:to import ${file} --if-exists skip\n`,
    );
    expect(await target.info('ann')).toBeNull();
    expect((await target.info('plain'))?.head).toBe(1);
  });

  it('copy refuses it the same way', async () => {
    const target = withoutTags();
    const run = await ckpt(['copy', '--from', 'memory:from', '--to', 'memory:to'], {
      'memory:from': await tagged(),
      'memory:to': target,
    });
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(
      /^ckpt: error UNSUPPORTED: (a session|session "ann") has tags, which the target store cannot keep: its backend \(memory\) has no 'tags' capability, .* take up where this stopped: ckpt copy --from memory:from --to memory:to --if-exists skip\n$/,
    );
    expect(await target.info('ann')).toBeNull();
  });

  it('a listing by tag on such a store is refused as UNSUPPORTED (exit 6)', async () => {
    const run = await ckpt(['--store', 'memory:x', 'sessions', '--where', 'user=ann'], {
      'memory:x': withoutTags(),
    });
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(/^ckpt: error UNSUPPORTED: sessions\(\) with where .*'tags'/);
  });
});

describe('ckpt tag beside another writer', () => {
  it('says CONFLICT (exit 4) when a checkpoint came between its read and its write, with the tags as they are now', async () => {
    const store = new CheckpointStore(memory());
    await store.checkpoint('chat', 1, { tags: { user: 'ann', status: 'open' } });
    // An application writes a checkpoint that sets tags just before the command writes its own.
    const racing = lentAround(store, 'setTags', async (call) => {
      await store.checkpoint('chat', 2, { tags: { user: 'ann', status: 'open', step: '2' } });
      return call();
    });
    const run = await ckptInProcess(['--store', 'memory:x', 'tag', 'chat', 'status=closed'], {
      open: async () => racing,
    });
    expect(run.code).toBe(4);
    expect(run.stdout).toBe('');
    expect(run.stderr).toBe(
      'ckpt: error CONFLICT: session "chat" was written while its tags were being changed (head 1, now 2); had that checkpoint tags, this change, made to the tags read before it, replaced them, or they replaced this change. Its tags now: status=closed user=ann; check them, and run the command again if they are not what they should be.\n',
    );
  });

  it('says CONFLICT when the tags changed again right after its write', async () => {
    const store = new CheckpointStore(memory());
    await store.checkpoint('chat', 1, { tags: { user: 'ann' } });
    const racing = lentAround(store, 'setTags', async (call) => {
      const done = await call();
      await store.setTags('chat', { user: 'bob' });
      return done;
    });
    const run = await ckptInProcess(
      ['--store', 'memory:x', 'tag', 'chat', '--replace', 'user=eve'],
      {
        open: async () => racing,
      },
    );
    expect(run.code).toBe(4);
    expect(run.stderr).toMatch(
      /CONFLICT: the tags of session "chat" were changed by another writer right after this change, which wrote user=eve\. Its tags now: user=bob; check them/,
    );
  });

  it('with --replace, a checkpoint between the read and the write is no conflict: the tags given are the whole set', async () => {
    const store = new CheckpointStore(memory());
    await store.checkpoint('chat', 1, { tags: { user: 'ann' } });
    const racing = lentAround(store, 'setTags', async (call) => {
      await store.checkpoint('chat', 2, { tags: { user: 'ann', step: '2' } });
      return call();
    });
    const run = await ckptInProcess(
      ['--store', 'memory:x', 'tag', 'chat', '--replace', 'user=eve', '--json'],
      { open: async () => racing },
    );
    expect(run.code).toBe(0);
    expect(JSON.parse(run.stdout)).toEqual({
      sessionId: 'chat',
      tags: { user: 'eve' },
      previous: { user: 'ann' },
      changed: true,
    });
    expect((await store.info('chat'))?.tags).toEqual({ user: 'eve' });
  });
});
