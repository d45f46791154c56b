/** What is Redis's alone: scripts per call, NOSCRIPT, key encoding, clients, many writers, errors. */

import { allPages, expectCkptError, ODD_IDS } from '@ckpt/contract-tests';
import {
  expectBadConnectionOptionsRefused,
  expectDistinctSeqsFromManyWriters,
} from '@ckpt/contract-tests/servers';
import { CheckpointStore, isCkptError, kvBackend, openStore } from '@ckpt/core';
import { type RedisBackend, redis, redisKv } from '@ckpt/redis';
import { Cluster, type ClusterOptions, Redis } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARD_TAGS, SHARDS, sessionKeys, shardOf } from '../src/schema.js';
import * as lua from '../src/statements.js';
import {
  admin,
  available,
  dropNamespace,
  freshBackend,
  freshNamespace,
  keysOf,
  url,
} from './support.js';

// Clients the tests open themselves; a backend never quits a client it was given.
const opened: Redis[] = [];
afterAll(async () => {
  for (const client of opened) await client.quit();
});
function ownClient(): Redis {
  const client = new Redis(url);
  opened.push(client);
  return client;
}

async function dropAndClose(backend: RedisBackend): Promise<void> {
  await backend.close();
  await dropNamespace(admin(), backend.namespace);
}

/** Record the name of every command `client` sends from now on. */
function recordCommands(client: Redis): { names: string[] } {
  const log = { names: [] as string[] };
  const send = client.sendCommand.bind(client);
  client.sendCommand = ((command: { name: string }, stream?: unknown) => {
    log.names.push(command.name.toLowerCase());
    return send(command as never, stream as never);
  }) as typeof client.sendCommand;
  return log;
}

describe.skipIf(!available)('redis', () => {
  it('runs each mutation as one script call and each read as one command or script', async () => {
    const client = ownClient();
    const backend = redis({ client, namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    // Connected, and every script cached, so that only the operations' own commands count.
    for (const script of Object.values(lua)) await client.script('LOAD', script.source);
    const log = recordCommands(client);
    const operations: [string, () => Promise<unknown>, string[]][] = [
      [
        'checkpoint (new session)',
        () => store.checkpoint('s', 1, { transcript: ['a'] }),
        ['evalsha'],
      ],
      ['checkpoint', () => store.checkpoint('s', 2, { metadata: { m: 1 } }), ['evalsha']],
      [
        'checkpoint with expectedHead and key',
        () => store.checkpoint('s', 3, { expectedHead: 2, idempotencyKey: 'k' }),
        ['evalsha'],
      ],
      ['idempotent retry', () => store.checkpoint('s', 3, { idempotencyKey: 'k' }), ['evalsha']],
      [
        'checkpoint with tags',
        () => store.checkpoint('s', 4, { tags: { user: 'ann' } }),
        ['evalsha'],
      ],
      ['setTags', () => store.setTags('s', { user: 'ann', status: 'open' }), ['evalsha']],
      // The head from the copy its session hash keeps; any other seq by script.
      ['load', () => store.load('s'), ['hmget']],
      ['load seq', () => store.load('s', 1), ['evalsha']],
      ['info', () => store.info('s'), ['evalsha']],
      ['history', () => store.history('s'), ['evalsha']],
      ['list', () => store.list('s'), ['evalsha']],
      ['transcript', () => store.transcript('s'), ['evalsha']],
      ['rollback', () => store.rollback('s', 1), ['evalsha']],
      // Read the source in one script, publish the copy in one script on the new id's slot.
      ['fork', () => store.fork('s', { newId: 'f' }), ['evalsha', 'evalsha']],
      ['prune', () => store.prune('s', { keepLast: 1 }), ['evalsha']],
      ['delete', () => store.delete('f'), ['evalsha']],
      ['pin', () => backend.pin({ sessionId: 's', seq: 1, note: null }), ['evalsha']],
      ['unpin', () => backend.unpin('s', 1), ['evalsha']],
      ['deleteIdle', () => backend.deleteIdle('s', 0, false), ['evalsha']],
      ['state set', () => store.state('x').set('k', 1), ['evalsha']],
      ['state get', () => store.state('x').get('k'), ['hget']],
      ['state keys', () => store.state('x').keys(), ['zrangebylex']],
      [
        'state update',
        () => store.state('x').update('k', (v) => Number(v) + 1),
        ['hget', 'evalsha'],
      ],
      ['state delete', () => store.state('x').delete('k'), ['evalsha']],
    ];
    for (const [what, op, expected] of operations) {
      log.names.length = 0;
      await op();
      expect(log.names, `commands sent by ${what}`).toEqual(expected);
    }
    // A sessions page reads one catalog slice per shard, then describes the sessions listed
    // with one script call per shard among them.
    log.names.length = 0;
    await store.sessions();
    expect(log.names.filter((n) => n === 'zrevrangebylex')).toHaveLength(SHARDS);
    expect(log.names.filter((n) => n === 'evalsha')).toHaveLength(1);
    // A page by tag reads one tag index slice per shard by script, then describes the same way.
    log.names.length = 0;
    await store.sessions({ where: { user: 'ann' } });
    expect(log.names).toEqual(Array.from({ length: SHARDS + 1 }, () => 'evalsha'));
    await dropAndClose(backend);
  });

  it('loads the head from the copy in its session hash, and reads it by seq when that copy is of another seq', async () => {
    const client = ownClient();
    const backend = redis({ client, namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    const session = sessionKeys(backend.namespace, 's').session;
    const copy = () => client.hmget(session, 'hseq', 'hinfo', 'hdata');
    await store.checkpoint('s', { step: 1 }, { metadata: { n: 1 } });
    await store.checkpoint('s', { step: 2 }, { metadata: { n: 2 } });
    await store.rollback('s', 1);
    expect((await copy())[0]).toBe('1');
    expect(await store.load('s')).toEqual(await store.load('s', 1));
    await store.fork('s', { newId: 'f', atSeq: 2 });
    expect(await store.load('f')).toEqual({ ...(await store.load('s', 2)), sessionId: 'f' });

    // A session written by a version that kept no copy, and a head such a version moved.
    await client.hdel(session, 'hseq', 'hinfo', 'hdata');
    expect(await store.load('s')).toEqual(await store.load('s', 1));
    await store.checkpoint('s', { step: 3 });
    await client.hset(session, 'head', '2');
    const log = recordCommands(client);
    expect((await store.load('s'))?.data).toEqual({ step: 2 });
    expect(log.names).toEqual(['hmget', 'evalsha']);
    await dropAndClose(backend);
  });

  it('describes a page of sessions with one script call per shard, not per session', async () => {
    const client = ownClient();
    const backend = redis({ client, namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    const ids = Array.from({ length: 60 }, (_, i) => `session ${i}`);
    for (const id of ids) await store.checkpoint(id, id, { metadata: { id } });
    await store.fork('session 0', { newId: 'forked' });
    const log = recordCommands(client);
    const page = await store.sessions({ limit: 61 });
    const shards = new Set([...ids, 'forked'].map(shardOf));
    expect(log.names.filter((n) => n === 'evalsha')).toHaveLength(shards.size);
    expect(shards.size).toBeLessThan(page.items.length);
    // Each description is its own session's, whatever shard call it came from.
    expect(page.items).toHaveLength(61);
    for (const info of page.items) {
      expect(info).toEqual(await store.info(info.sessionId));
      if (info.sessionId === 'forked') {
        expect(info.forkedFrom).toEqual({ sessionId: 'session 0', seq: 1 });
      } else expect(info.metadata).toEqual({ id: info.sessionId });
    }
    await dropAndClose(backend);
  });

  it('never sends KEYS, even for listings', async () => {
    const client = ownClient();
    const backend = redis({ client, namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    const log = recordCommands(client);
    for (let i = 0; i < 30; i++) await store.checkpoint(`s${i}`, i);
    await store.state('x').set('a', 1);
    let cursor: string | null = null;
    let listed = 0;
    do {
      const page = await store.sessions({ limit: 7, cursor });
      listed += page.items.length;
      cursor = page.cursor;
    } while (cursor);
    expect(listed).toBe(30);
    await store.state('x').keys({ prefix: 'a' });
    expect(log.names).not.toContain('keys');
    await dropAndClose(backend);
  });

  it('pages the catalog exactly when the sessions crowd into one shard', async () => {
    const backend = freshBackend();
    const store = new CheckpointStore(backend);
    // 120 ids of shard 0 and 30 of other shards, written in an order unrelated to either.
    const crowded: string[] = [];
    const spread: string[] = [];
    for (let i = 0; crowded.length < 120 || spread.length < 30; i++) {
      const id = `s-${i}`;
      if (shardOf(id) === 0) {
        if (crowded.length < 120) crowded.push(id);
      } else if (spread.length < 30) spread.push(id);
    }
    const ids = [...crowded, ...spread].sort(() => Math.random() - 0.5);
    for (const id of ids) await store.checkpoint(id, 1);
    const listed: string[] = [];
    let cursor: string | null = null;
    do {
      const page = await store.sessions({ limit: 50, cursor });
      listed.push(...page.items.map((s) => s.sessionId));
      cursor = page.cursor;
    } while (cursor);
    // Newest first: the reverse of the order they were written in (ties broken by id).
    const infos = await Promise.all(ids.map((id) => store.info(id)));
    const expected = infos
      .map((info) => info!)
      .sort(
        (a, b) =>
          b.updatedAt.getTime() - a.updatedAt.getTime() ||
          Buffer.compare(Buffer.from(b.sessionId), Buffer.from(a.sessionId)),
      )
      .map((info) => info.sessionId);
    expect(listed).toEqual(expected);
    await dropAndClose(backend);
  });

  it('sends a script whole once after the server forgot it (NOSCRIPT), then by its hash again', async () => {
    const client = ownClient();
    const backend = redis({ client, namespace: freshNamespace() });
    const store = new CheckpointStore(backend);
    await store.checkpoint('s', 1);
    await client.script('FLUSH');
    const log = recordCommands(client);
    expect((await store.checkpoint('s', 2)).seq).toBe(2);
    expect(log.names).toEqual(['evalsha', 'eval']);
    log.names.length = 0;
    expect((await store.checkpoint('s', 3)).seq).toBe(3);
    expect(log.names).toEqual(['evalsha']);
    await dropAndClose(backend);
  });

  it('writes every id in hex under its shard tag, so no character of an id reaches a key name', async () => {
    const backend = freshBackend();
    const store = new CheckpointStore(backend);
    for (const id of ODD_IDS) {
      await store.checkpoint(id, { id }, { transcript: ['t'], idempotencyKey: 'k' });
      await store.state(id).set(id, 1);
    }
    const keys = await keysOf(admin(), backend.namespace);
    const tags = SHARD_TAGS.join('|');
    // Every key but the namespace's marker, which says the namespace holds a store.
    const layout = new RegExp(
      `^${backend.namespace}:(\\{(${tags})\\}:(sessions|scopes|ids|ids:built|changes|changes:floor|[a-z]:[0-9a-f]+)|schema_version)$`,
    );
    for (const key of keys) expect(key).toMatch(layout);
    // One session's keys: six kinds, all under the shard tag of its id.
    const id = 'a:{b}*?[c]\\';
    await store.checkpoint(id, 1, { transcript: ['t'], idempotencyKey: 'k' });
    const hexId = Buffer.from(id).toString('hex');
    const own = (await keysOf(admin(), backend.namespace)).filter((k) => k.endsWith(`:${hexId}`));
    expect(own).toHaveLength(6);
    for (const key of own) expect(key).toContain(`{${SHARD_TAGS[shardOf(id)]}}`);
    await dropAndClose(backend);
  });

  it('keeps needs in a key of their own, only for a session whose checkpoints need some', async () => {
    const backend = freshBackend();
    const store = new CheckpointStore(backend);
    await store.checkpoint('plain', 1);
    await store.checkpoint('plain', 2);
    await store.checkpoint('needing', 1);
    await store.checkpoint('needing', 2, { needs: [1] });
    const kinds = async (id: string) =>
      (await keysOf(admin(), backend.namespace))
        .filter((k) => k.endsWith(`:${Buffer.from(id).toString('hex')}`))
        .map((k) => k.split(':').at(-2))
        .sort();
    expect(await kinds('plain')).toEqual(['d', 'i', 'q', 's']);
    expect(await kinds('needing')).toEqual(['d', 'i', 'n', 'q', 's']);
    await store.prune('needing', { keepLast: 1 });
    await store.checkpoint('needing', 3);
    await store.prune('needing', { keepLast: 1 });
    expect(await kinds('needing')).toEqual(['d', 'i', 'q', 's']);
    await dropAndClose(backend);
  });

  it('lists by prefix the sessions written before the index of ids existed', async () => {
    const backend = freshBackend();
    const store = new CheckpointStore(backend);
    for (let i = 0; i < 40; i++) await store.checkpoint(`user-${i % 4}/${i}`, i);
    // As a store of an earlier version left them: the catalog, and no index of ids.
    const r = admin();
    for (const key of await keysOf(r, backend.namespace))
      if (key.includes(':ids')) await r.del(key);
    const listed = await allPages((p) => store.sessions({ ...p, prefix: 'user-1/' }), 3);
    expect(listed.map((s) => s.sessionId).sort()).toEqual(
      Array.from({ length: 10 }, (_, i) => `user-1/${4 * i + 1}`).sort(),
    );
    // Indexed once: a session deleted since is gone from the listing too.
    await store.delete('user-1/1');
    expect(
      (await store.sessions({ prefix: 'user-1/1', limit: 100 })).items
        .map((s) => s.sessionId)
        .sort(),
    ).toEqual(['user-1/13', 'user-1/17']);
    await dropAndClose(backend);
  });

  it('reads integer replies right on a client made with stringNumbers', async () => {
    const client = new Redis(url, { stringNumbers: true });
    opened.push(client);
    const namespace = freshNamespace();
    for (const store of [
      new CheckpointStore(redis({ client, namespace })),
      new CheckpointStore(kvBackend(redisKv({ client, namespace: `${namespace}_kv` }))),
    ]) {
      for (let i = 1; i <= 3; i++) await store.checkpoint('s', i);
      expect(await store.prune('s', { keepLast: 1 })).toBe(2);
      await store.state('scope').set('k', 1);
      expect(await store.state('scope').update('k', (n) => (n as number) + 1)).toBe(2);
      expect(await store.state('scope').delete('k')).toBe(true);
      expect(await store.delete('s')).toBe(true);
      expect(await store.delete('s')).toBe(false);
      await store.close();
    }
    await dropNamespace(admin(), namespace);
    await dropNamespace(admin(), `${namespace}_kv`);
  });

  it('keeps every key under the prefix of a client made with keyPrefix, through every operation', async () => {
    const client = new Redis(url, { keyPrefix: 'app:' });
    opened.push(client);
    const namespace = freshNamespace();
    const store = new CheckpointStore(redis({ client, namespace }));
    await store.checkpoint('s', { step: 1 }, { transcript: ['one'], idempotencyKey: 'k' });
    expect((await store.checkpoint('s', { step: 9 }, { idempotencyKey: 'k' })).seq).toBe(1);
    await store.checkpoint('s', { step: 2 }, { transcript: ['two'] });
    await store.checkpoint('s', { step: 3 }, { transcript: ['three'] });
    expect(await store.rollback('s', 2)).toBe(2);
    await store.fork('s', { atSeq: 2, newId: 'f' });
    expect((await store.load('f'))?.data).toEqual({ step: 2 });
    expect((await store.transcript('f')).items.map((entry) => entry.item)).toEqual(['two', 'one']);
    expect((await store.list('s')).items.map((info) => info.seq)).toEqual([3, 2, 1]);
    // Both, in either order: the fork and the rollback may fall in the same millisecond.
    expect((await store.sessions()).items.map((info) => info.sessionId).sort()).toEqual(['f', 's']);
    await store.setTags('s', { user: 'ann' });
    expect((await store.sessions({ where: { user: 'ann' } })).items[0]?.sessionId).toBe('s');
    expect(await store.prune('s', { keepLast: 1 })).toBe(1);
    const scope = store.state('scope');
    await scope.set('x', 1);
    expect(await scope.update('x', (n) => (n as number) + 1)).toBe(2);
    expect((await scope.keys()).items).toEqual(['x']);

    const prefixed = await keysOf(admin(), `app:${namespace}`);
    expect(prefixed.length).toBeGreaterThan(0);
    expect(await keysOf(admin(), namespace)).toEqual([]);
    expect([await store.delete('s'), await store.delete('f'), await scope.delete('x')]).toEqual([
      true,
      true,
      true,
    ]);
    // What is left is the marker that says the namespace holds a store, and the change log of
    // each shard written (the deletes are in it), under the prefix too.
    const left = await keysOf(admin(), `app:${namespace}`);
    expect(left).toContain(`app:${namespace}:schema_version`);
    for (const key of left.filter((k) => !k.endsWith(':schema_version'))) {
      expect(key).toMatch(new RegExp(`^app:${namespace}:\\{[^}]+\\}:changes$`));
    }
    expect(left.length).toBeGreaterThan(1);
  });

  it('leaves a client it was given open, and quits one it opened', async () => {
    const client = ownClient();
    const given = redis({ client, namespace: freshNamespace() });
    await new CheckpointStore(given).checkpoint('s', 1);
    await given.close();
    expect(await client.ping()).toBe('PONG');
    await dropNamespace(admin(), given.namespace);

    const owned = freshBackend();
    await new CheckpointStore(owned).checkpoint('s', 1);
    await owned.close();
    expect(owned.client.status).toBe('end');
    await dropNamespace(admin(), owned.namespace);
  });

  it('gives 16 connections x 100 checkpoints on one session 1,600 distinct seqs', async () => {
    const first = freshBackend();
    const others = Array.from({ length: 15 }, () => redis({ url, namespace: first.namespace }));
    await expectDistinctSeqsFromManyWriters([first, ...others], 100);
    for (const b of others) await b.close();
    await dropAndClose(first);
  }, 60_000);

  it('opens from a URL with openStore, namespace included', async () => {
    const namespace = freshNamespace();
    const store = await openStore(`${url}?namespace=${namespace}`);
    await store.checkpoint('s', { via: 'url' });
    expect((await keysOf(admin(), namespace)).length).toBeGreaterThan(0);
    await store.close();
    await dropNamespace(admin(), namespace);
  });

  it("works in the URL's database, and refuses one the server does not have instead of using database 0", async () => {
    const inDatabase = (db: number, namespace: string) => {
      const at = new URL(url);
      at.pathname = `/${db}`;
      at.searchParams.set('namespace', namespace);
      return openStore(at.toString());
    };
    const namespace = freshNamespace();
    const second = await inDatabase(1, namespace);
    await second.checkpoint('s', { in: 1 });
    expect(await keysOf(admin(), namespace)).toEqual([]);
    await second.delete('s');
    await second.close();

    const missing = await inDatabase(99_999, namespace);
    for (const call of [() => missing.checkpoint('s', 1), () => missing.load('s')]) {
      const err = await call().catch((e: unknown) => e);
      expect(isCkptError(err, 'BACKEND')).toBe(true);
      expect((err as Error).message).toMatch(
        /Redis refused database 99999 named in the URL \(ERR DB index is out of range\); name one the server has/,
      );
    }
    await missing.close();
    expect(await keysOf(admin(), namespace)).toEqual([]);
  });
});

// No server needed: every one of these is refused before a connection is made.
describe('redis options', () => {
  it.each([
    ['redis', redis],
    ['redisKv', redisKv],
  ])('%s() refuses bad options with INVALID_ARGUMENT, never showing a password', (_, factory) =>
    expectBadConnectionOptionsRefused(factory, { scheme: 'redis', handle: 'client' }),
  );

  it.each([
    ['redis', redis],
    ['redisKv', redisKv],
  ])(
    '%s() refuses a Cluster client that reads from replicas, and takes one that reads from primaries',
    async (_, factory) => {
      const cluster = (scaleReads?: ClusterOptions['scaleReads']) =>
        new Cluster([{ host: '127.0.0.1', port: 7000 }], { lazyConnect: true, scaleReads });
      for (const scaleReads of ['slave', 'all', () => null] as const) {
        const err = await expectCkptError(
          () => factory({ client: cluster(scaleReads) }),
          'INVALID_ARGUMENT',
        );
        expect(err.message).toContain("scaleReads: 'master'");
        expect(err.details).toEqual({ argument: 'client' });
      }
      for (const scaleReads of [undefined, 'master'] as const) {
        const client = cluster(scaleReads);
        await factory({ client }).close?.();
        client.disconnect();
      }
    },
  );
});
