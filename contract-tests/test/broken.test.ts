/**
 * The suite must fail on deliberately broken backends: it runs itself on each of them in a
 * child vitest and checks that the case meant to catch each flaw failed.
 */
import { execFile } from 'node:child_process';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { promisify } from 'node:util';
import { runContractTests } from '@ckpt/contract-tests';
import { MemoryBackend } from '@ckpt/memory';
import { beforeAll, describe, expect, it } from 'vitest';
import { BROKEN, BROKEN_KVS, CAUGHT_BY, KV_CAUGHT_BY } from './fixtures/broken-backends.js';

interface JsonReport {
  testResults: { assertionResults: { fullName: string; status: string }[] }[];
}

const root = fileURLToPath(new URL('../..', import.meta.url));
let results: { fullName: string; status: string }[] = [];

beforeAll(async () => {
  const dir = mkdtempSync(join(tmpdir(), 'ckpt-broken-'));
  const out = join(dir, 'report.json');
  const vitest = join(root, 'node_modules/vitest/vitest.mjs');
  const config = join(root, 'contract-tests/test/fixtures/vitest.config.ts');
  // The child run is expected to fail; its exit code says nothing, its report says everything.
  await promisify(execFile)(
    process.execPath,
    [vitest, 'run', '--config', config, '--reporter=json', `--outputFile=${out}`],
    { cwd: root, maxBuffer: 64 * 1024 * 1024 },
  ).catch(() => undefined);
  try {
    const report = JSON.parse(readFileSync(out, 'utf8')) as JsonReport;
    results = report.testResults.flatMap((file) => file.assertionResults);
  } finally {
    rmSync(dir, { recursive: true, force: true });
  }
}, 300_000);

describe('the contract suite on broken backends', () => {
  it.each(Object.keys(BROKEN))('fails on a backend that %s', (flaw) => {
    const mine = results.filter((r) => r.fullName.includes(`broken: ${flaw} `));
    expect(mine.length, 'the suite ran on this backend').toBeGreaterThan(100);
    const caught = mine.filter((r) => r.status === 'failed').map((r) => r.fullName);
    expect(
      caught.some((name) => name.includes(CAUGHT_BY[flaw]!)),
      caught.join('\n'),
    ).toBe(true);
  });
});

describe('the KvStore cases on broken key-value stores', () => {
  it.each(Object.keys(BROKEN_KVS))(
    'fail on a store that %s, in the case of that method',
    (flaw) => {
      const mine = results.filter((r) => r.fullName.includes(`broken kv: ${flaw} `));
      expect(mine.length, 'the cases ran on this store').toBeGreaterThan(10);
      const caught = mine.filter((r) => r.status === 'failed').map((r) => r.fullName);
      expect(
        caught.some((name) => name.includes(KV_CAUGHT_BY[flaw as keyof typeof BROKEN_KVS])),
        caught.join('\n'),
      ).toBe(true);
    },
  );
});

describe('runContractTests(harness, { groups })', () => {
  it('registers the groups named and no other', () => {
    const mine = results.filter((r) => r.fullName.includes('one group: idempotency '));
    const all = results.filter((r) => r.fullName.includes(`broken: ${Object.keys(BROKEN)[0]} `));
    expect(mine.length, 'cases of the idempotency group').toBeGreaterThan(5);
    expect(mine.length, 'every group ran').toBeLessThan(all.length / 10);
    expect(mine.every((r) => r.status === 'passed')).toBe(true);
  });

  it('refuses a name that is not a group, listing the groups', () => {
    const harness = {
      name: 'memory',
      capabilities: {
        concurrentWriters: true,
        listSessions: true,
        listStateKeys: true,
        watch: false,
        tags: false,
      },
      create: () => new MemoryBackend(),
    };
    expect(() => runContractTests(harness, { groups: ['idempotence' as never] })).toThrow(
      'runContractTests: no group named "idempotence"; the groups are checkpoints, lifecycle, needs, listings, values, inputs, idempotency, state, concurrency, transfer, retention, codecs, surface, destroy, watch, tags, model.',
    );
  });
});
