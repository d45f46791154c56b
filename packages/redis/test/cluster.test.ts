/** On a real Redis Cluster of three masters: slots, cross-node forks, many writers. */

import { ODD_IDS } from '@ckpt/contract-tests';
import { expectDistinctSeqsFromManyWriters } from '@ckpt/contract-tests/servers';
import { CheckpointStore } from '@ckpt/core';
import { type RedisBackend, redis } from '@ckpt/redis';
import type { Cluster } from 'ioredis';
import { afterAll, describe, expect, it } from 'vitest';
import { SHARD_TAGS, shardOf } from '../src/schema.js';
import {
  admin,
  clusterAvailable,
  clusterClient,
  dropNamespace,
  freshNamespace,
  keysOf,
} from './support.js';

const clients: Cluster[] = [];
afterAll(async () => {
  for (const client of clients) await client.quit();
});
function backendOnCluster(namespace = freshNamespace()): RedisBackend {
  const client = clusterClient();
  clients.push(client);
  return redis({ client, namespace });
}

const slotOf = async (key: string) => Number(await admin(true).cluster('KEYSLOT', key));

/** The master serving `slot`, as host:port. */
async function masterOf(slot: number): Promise<string> {
  const ranges = await admin(true).cluster('SLOTS');
  const [, , master] = ranges.find(([from, to]) => slot >= from && slot <= to)!;
  return `${master![0]}:${master![1]}`;
}

describe.skipIf(!clusterAvailable)('redis on a cluster', () => {
  it('puts shard n in slots [1024 n, 1024 n + 1023], so equal slot runs get equal shares', async () => {
    for (const [n, tag] of SHARD_TAGS.entries()) {
      expect(Math.floor((await slotOf(`{${tag}}`)) / 1024)).toBe(n);
    }
  });

  it('keeps every key of one session in one slot, whatever its id', async () => {
    const backend = backendOnCluster();
    const store = new CheckpointStore(backend);
    for (const id of ODD_IDS) {
      await store.checkpoint(id, 1, { transcript: ['t'], idempotencyKey: 'k' });
      await store.checkpoint(id, 2, { needs: [1] });
      await backend.pin({ sessionId: id, seq: 1, note: null });
    }
    const keys = await keysOf(backend.client, backend.namespace);
    const slotsById = new Map<string, Set<number>>();
    for (const key of keys) {
      const id = key.slice(key.lastIndexOf(':') + 1);
      if (
        key.endsWith(':sessions') ||
        key.includes(':ids') ||
        key.includes(':changes') ||
        key.endsWith(':schema_version')
      ) {
        continue;
      }
      const slots = slotsById.get(id) ?? new Set();
      slots.add(await slotOf(key));
      slotsById.set(id, slots);
    }
    expect(slotsById.size).toBe(ODD_IDS.length);
    // Every kind of key a session has, the needs and pins hashes among them.
    const kinds = new Set(keys.map((key) => key.split(':').at(-2)));
    for (const kind of ['s', 'i', 'd', 't', 'q', 'k', 'n', 'p']) expect(kinds).toContain(kind);
    for (const slots of slotsById.values()) expect(slots.size).toBe(1);
    await backend.close();
    await dropNamespace(admin(true), backend.namespace);
  });

  it('forks a session to an id on another master, copying the whole lineage', async () => {
    const backend = backendOnCluster();
    const store = new CheckpointStore(backend);
    const source = 'source';
    const sourceMaster = await masterOf(await slotOf(`{${SHARD_TAGS[shardOf(source)]}}`));
    let newId = '';
    for (let i = 0; !newId; i++) {
      const candidate = `copy-${i}`;
      const master = await masterOf(await slotOf(`{${SHARD_TAGS[shardOf(candidate)]}}`));
      if (master !== sourceMaster) newId = candidate;
    }
    for (let i = 1; i <= 20; i++) await store.checkpoint(source, { i }, { transcript: [`t${i}`] });
    await store.rollback(source, 12);
    await store.checkpoint(source, { branch: true }, { transcript: ['b'] });
    await store.fork(source, { newId, atSeq: 21 });
    expect(await store.info(newId)).toMatchObject({
      head: 21,
      checkpoints: 13,
      forkedFrom: { sessionId: source, seq: 21 },
    });
    const copied = (await store.transcript(newId, { limit: 100 })).items;
    expect(copied).toHaveLength(13);
    expect(copied).toEqual((await store.transcript(source, { limit: 100 })).items);
    await store.checkpoint(newId, { after: 'fork' });
    expect((await store.info(source))?.head).toBe(21);
    await backend.close();
    await dropNamespace(admin(true), backend.namespace);
  });

  it('gives 16 connections x 100 checkpoints on one session 1,600 distinct seqs', async () => {
    const first = backendOnCluster();
    const others = Array.from({ length: 15 }, () => backendOnCluster(first.namespace));
    await expectDistinctSeqsFromManyWriters([first, ...others], 100);
    await dropNamespace(admin(true), first.namespace);
  }, 60_000);
});
