/**
 * The built `ckpt` on encrypted and compressed stores, on every backend a URL reaches: keys from
 * CKPT_KEYS or a key file, `ckpt rekey` beside a writer, `ckpt copy` between codecs, and what a
 * command given no key, or a bad one, says (never a key's bytes).
 */
import { createHash } from 'node:crypto';
import { chmodSync, mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { storeReads } from '@ckpt/contract-tests';
import { compress, encrypt, openStore } from '@ckpt/core';
import { completeBackend } from '@ckpt/core/adapter';
import { URL_STORES } from '@ckpt/test-stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, ckpt, type Run } from './support/binary.js';
import { madeStores } from './support/made-stores.js';
import { fill } from './support/store-fill.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-keys-'));
beforeAll(buildCli, 300_000);

const K1 = createHash('sha256').update('cli first key').digest();
const K2 = createHash('sha256').update('cli second key').digest();
/** Every spelling of the keys a message could leak. */
const KEY_TEXTS = [K1, K2].flatMap((key) => [
  key.toString('base64'),
  key.toString('base64url'),
  key.toString('hex'),
  key.toString('hex').toUpperCase(),
  key.toString('utf8'),
  key.toString('latin1'),
]);
const k1Only = { CKPT_KEYS: `k1=${K1.toString('base64')}` };
const rotated = {
  CKPT_KEYS: `k2=${K2.toString('base64')},k1=${K1.toString('base64')}`,
  CKPT_COMPRESS: 'gzip',
};

const sealedWith = (keys: Record<string, Buffer>, current: string) => ({
  codecs: [compress('gzip'), encrypt({ keys, current })],
});
const K1_CODECS = sealedWith({ k1: K1 }, 'k1');
const K2_ONLY = sealedWith({ k2: K2 }, 'k2');

const stores = madeStores('cli_keys');
const { unique } = stores;
afterAll(async () => {
  await stores.destroyAll();
  rmSync(dir, { recursive: true, force: true });
});

/** A finding of `ckpt doctor --json`. */
interface DoctorFinding {
  check: string;
  status: string;
  detail: string;
  fix?: string;
  keys?: string[];
  codecs?: string[];
  at?: string[];
}

/** What no output of the command may hold, nor any line of it: a key in any spelling. */
function expectNoKeys(run: Run): void {
  const lines = [run.stdout, run.stderr].flatMap((text) => [text, ...text.split('\n')]);
  for (const key of KEY_TEXTS) {
    for (const line of lines) expect(line.includes(key), 'a key in the output').toBe(false);
  }
}

/** The raw text of every stored checkpoint value and state value of the store at `url`. */
async function rawValues(url: string): Promise<string[]> {
  const store = await openStore(url, { create: false });
  const backend = completeBackend(store.backend);
  const values: string[] = [];
  for (const session of await backend.sessions({ after: null, limit: 100, prefix: '' })) {
    const page = await backend.exportCheckpoints(session.sessionId, { afterSeq: null, limit: 100 });
    for (const cp of page) values.push(cp.data, cp.transcript);
  }
  for (const scope of await backend.stateScopes({ after: null, limit: 100 })) {
    for (const key of await backend.stateKeys(scope, { prefix: '', after: null, limit: 100 })) {
      values.push((await backend.stateGet(scope, key))!);
    }
  }
  await store.close();
  return values.filter((value) => value !== '[]');
}

describe.each(URL_STORES)('ckpt with codecs on $name', (backend) => {
  /** A store in a namespace of its own, filled under key k1, and its URL. */
  async function sealedStore(): Promise<string> {
    const url = backend.url(unique(), dir);
    stores.track(url);
    const store = await openStore(url, K1_CODECS);
    await fill(store);
    await store.close();
    return url;
  }

  it('reads a store with the keys of CKPT_KEYS, and says which key is missing without them', async () => {
    const url = await sealedStore();
    const shown = await ckpt(['--store', url, 'show', 'main', '--json'], { env: k1Only });
    expect(shown.code).toBe(0);
    expect(JSON.parse(shown.stdout).checkpoint.data).toEqual({ branch: true });
    const without = await ckpt(['--store', url, 'show', 'main']);
    expect(without.code).toBe(6);
    expect(without.stderr).toMatch(
      /^ckpt: error UNREADABLE: a stored value of checkpoint 7 of session "main" is encrypted \(key "k1"\), and no keys were given; give its key with CKPT_KEYS or --key-file\.\n$/,
    );
    const otherKey = await ckpt(['--store', url, 'show', 'main'], {
      env: { CKPT_KEYS: `k2=${K2.toString('base64')}` },
    });
    expect(otherKey.code).toBe(6);
    expect(otherKey.stderr).toMatch(
      /^ckpt: error UNREADABLE: .*key "k1", not among the keys given \(k2\); give its key with CKPT_KEYS or --key-file\.\n$/,
    );
    expect(otherKey.stderr).not.toContain('encrypt()');
    expectNoKeys(shown);
    expectNoKeys(without);
  });

  it('says where a value it cannot read is, without its key or with another one', async () => {
    const url = await sealedStore();
    const k2Only = { CKPT_KEYS: `k2=${K2.toString('base64')}` };
    const cases: [string[], RegExp][] = [
      [['show', 'main'], /a stored value of checkpoint 7 of session "main" /],
      [['show', 'main', '--seq', '5'], /a stored value of checkpoint 5 of session "main" /],
      [['transcript', 'main'], /a stored value of checkpoint 7 of session "main" /],
      [['diff', 'main', '5', '6'], /a stored value of checkpoint [56] of session "main" /],
      [['export', '--session', 'main'], /a stored value of checkpoint \d+ of session "main" /],
      [['export'], /a stored value of checkpoint \d+ of session "/],
      [['state', 'prefs', 'get', 'k'], /a stored value of state key "k" of scope "prefs" /],
    ];
    for (const env of [{}, k2Only]) {
      for (const [args, where] of cases) {
        const run = await ckpt(['--store', url, ...args], { env });
        expect({ args, env, code: run.code }).toEqual({ args, env, code: 6 });
        expect(run.stderr).toMatch(/^ckpt: error UNREADABLE: .*key "k1"/);
        expect(run.stderr).toMatch(where);
        expect(run.stderr.split('\n')).toHaveLength(2);
        expectNoKeys(run);
      }
    }
    // history lists metadata, which is stored in the clear, so it needs no key.
    expect((await ckpt(['--store', url, 'history', 'main'])).code).toBe(0);
  });

  it('doctor reads a sample of the values with the keys given, and names the keys and codecs it lacks', async () => {
    const url = await sealedStore();
    const doctor = async (env: Record<string, string>) => {
      const run = await ckpt(['--store', url, 'doctor', '--json'], { env });
      expectNoKeys(run);
      const found = JSON.parse(run.stdout) as DoctorFinding[];
      return { code: run.code, values: found.filter((d) => d.check === 'values') };
    };

    const readable = await doctor(k1Only);
    expect(readable.code).toBe(0);
    expect(readable.values).toEqual([
      expect.objectContaining({
        status: 'ok',
        keys: ['k1'],
        codecs: expect.arrayContaining(['aes-256-gcm']),
      }),
    ]);
    expect(readable.values[0]!.detail).toMatch(
      /^the \d+ values sampled .* read: \d+ (gzip \+ )?aes-256-gcm with key k1/,
    );

    const without = await doctor({});
    expect(without.code).toBe(7);
    expect(without.values).toEqual([
      expect.objectContaining({
        status: 'fail',
        keys: ['k1'],
        fix: expect.stringMatching(/key "k1".*CKPT_KEYS.*--key-file/),
      }),
    ]);
    expect(without.values[0]!.detail).toMatch(/encrypted under key "k1", and no keys were given/);
    expect(without.values[0]!.at).toContain('session "it\'s" checkpoint 1');

    const otherName = await doctor({ CKPT_KEYS: `k2=${K2.toString('base64')}` });
    expect(otherName.code).toBe(7);
    expect(otherName.values).toEqual([expect.objectContaining({ status: 'fail', keys: ['k1'] })]);
    expect(otherName.values[0]!.detail).toMatch(/the keys given are "k2"/);

    const wrongKey = await doctor({ CKPT_KEYS: `k1=${K2.toString('base64')}` });
    expect(wrongKey.code).toBe(7);
    expect(wrongKey.values).toEqual([expect.objectContaining({ status: 'fail', keys: ['k1'] })]);
    expect(wrongKey.values[0]!.detail).toMatch(/failed authentication under key "k1"/);

    // A value as a later version's codec would store it.
    const plain = await openStore(url, { create: false });
    await plain.backend.stateSet('zz', 'later', 'ckpt1;lz9;;AAAA');
    await plain.close();
    const unknown = await doctor(k1Only);
    expect(unknown.code).toBe(7);
    expect(unknown.values).toEqual([
      expect.objectContaining({
        status: 'fail',
        codecs: ['lz9'],
        at: ['state key "later" of scope "zz"'],
      }),
    ]);

    const text = await ckpt(['--store', url, 'doctor']);
    expect(text.code).toBe(7);
    expect(text.stdout).toMatch(/^✗ values +.*key "k1".*\n +→ give ckpt .*key "k1"/m);
    expectNoKeys(text);
  });

  it('rekey rewrites every value under the current key beside a writer, and the old key can go', async () => {
    const url = await sealedStore();
    const before = await openStore(url, K1_CODECS);
    const reads = await storeReads(before);
    await before.close();
    // Writers are given the new key first; rekey then runs beside them.
    const writing = await openStore(url, sealedWith({ k2: K2, k1: K1 }, 'k2'));
    let live = true;
    let written = 0;
    const writer = (async () => {
      while (live) {
        await writing.checkpoint('live', { n: ++written }, { transcript: [written] });
        // A turn of the event loop, in which the command's exit is heard.
        await new Promise((resolve) => setImmediate(resolve));
      }
    })();
    const run = await ckpt(['--store', url, 'rekey'], { env: rotated }).finally(() => {
      live = false;
    });
    await writer;
    await writing.close();
    expect(run.code).toBe(0);
    expect(run.stdout).toBe('');
    // Then one line on what stays of the values it replaced (rekey-leftovers.test.ts).
    expect(run.stderr).toMatch(
      /^rekeyed \d+ checkpoints and 6 state values in [\d.]+ s; every value is now under gzip \+ aes-256-gcm with key k2 \(gzip leaves values shorter than its minBytes uncompressed\)\.\n[^\n]+\n$/,
    );
    expectNoKeys(run);
    for (const value of await rawValues(url))
      expect(value).toMatch(/^ckpt1;(gzip,)?aes-256-gcm:k2;/);

    const again = await ckpt(['--store', url, 'rekey', '--json'], { env: rotated });
    expect(again.code).toBe(0);
    expect(JSON.parse(again.stdout)).toEqual({ checkpoints: 0, state: 0 });
    const after = await openStore(url, K2_ONLY);
    const { sessions, reads: sessionReads, state } = await storeReads(after);
    expect(state).toEqual(reads.state);
    expect(sessions.filter((s) => s.sessionId !== 'live')).toEqual(reads.sessions);
    expect(sessionReads.filter((r) => r.info?.sessionId !== 'live')).toEqual(reads.reads);
    expect((await after.history('live')).length).toBe(written);
    await after.close();
  });

  it('copies a store between codecs: into one sealed under a key file, and back out as plain text', async () => {
    const plainUrl = backend.url(unique(), dir);
    stores.track(plainUrl);
    const plain = await openStore(plainUrl);
    await fill(plain);
    const reads = await storeReads(plain);
    await plain.close();

    const keyFile = join(dir, `${unique()}.keys`);
    writeFileSync(
      keyFile,
      `# ckpt keys\nk2=${K2.toString('base64')}\n\nk1=${K1.toString('base64url')}\n`,
    );
    chmodSync(keyFile, 0o600);
    const sealedUrl = backend.url(unique(), dir);
    stores.track(sealedUrl);
    const sealing = await ckpt(['copy', '--from', plainUrl, '--to', sealedUrl], {
      env: { CKPT_KEY_FILE: keyFile, CKPT_COMPRESS: 'gzip' },
    });
    expect(sealing.code).toBe(0);
    for (const value of await rawValues(sealedUrl)) {
      expect(value).toMatch(/^ckpt1;(gzip,)?aes-256-gcm:k2;/);
    }
    const sealed = await openStore(sealedUrl, K2_ONLY);
    expect(await storeReads(sealed)).toEqual(reads);
    await sealed.close();

    const backUrl = backend.url(unique(), dir);
    stores.track(backUrl);
    const unsealing = await ckpt([
      '--key-file',
      keyFile,
      'copy',
      '--from',
      sealedUrl,
      '--to',
      backUrl,
      '--to-plain',
    ]);
    expect(unsealing.code).toBe(0);
    for (const value of await rawValues(backUrl)) expect(value.startsWith('ckpt1;')).toBe(false);
    const back = await openStore(backUrl);
    expect(await storeReads(back)).toEqual(reads);
    await back.close();
    expectNoKeys(sealing);
    expectNoKeys(unsealing);
  });
});

describe('ckpt codec options', () => {
  const url = `sqlite:${join(dir, 'options.db')}`;
  beforeAll(async () => {
    const store = await openStore(url, K1_CODECS);
    await store.checkpoint('s', { n: 1 });
    await store.close();
  });

  it('refuses keys it cannot use before opening anything, never showing them', async () => {
    const short = K1.subarray(0, 16).toString('base64');
    const cases: [Record<string, string>, number, RegExp][] = [
      [
        { CKPT_KEYS: K1.toString('base64') },
        2,
        /^ckpt: error: CKPT_KEYS: entry 1 is not name=<base64 key>/,
      ],
      [
        { CKPT_KEYS: `k1=${K1.toString('hex')}!` },
        2,
        /^ckpt: error: CKPT_KEYS: key "k1" is not base64/,
      ],
      [
        { CKPT_KEYS: `k1=${short}` },
        2,
        /^ckpt: error: CKPT_KEYS: key "k1" is 16 bytes, and a key is 32; make one with: openssl rand -base64 32\.\n$/,
      ],
      [
        { ...k1Only, CKPT_KEY_CURRENT: 'k9' },
        2,
        /^ckpt: error: the current key "k9" is not among the keys given \(k1\); name one of them with --current-key or CKPT_KEY_CURRENT\.\n$/,
      ],
      [
        { ...k1Only, CKPT_KEY_FILE: join(dir, 'none.keys') },
        2,
        /^ckpt: error: both CKPT_KEYS and a key file are given/,
      ],
      [
        { CKPT_KEY_FILE: join(dir, 'none.keys') },
        2,
        /^ckpt: error: cannot read the key file .*none\.keys \(ENOENT\)\.\n$/,
      ],
      [
        { CKPT_KEYS: `k3=${K1.toString('base64')};k2=${K2.toString('base64')}` },
        2,
        /^ckpt: error: CKPT_KEYS: key "k3" is not base64; entries are separated by commas: name=base64,name=base64; /,
      ],
      [
        { CKPT_KEYS: `k3=${K1.toString('base64')} k2=${K2.toString('base64')}` },
        2,
        /^ckpt: error: CKPT_KEYS: key "k3" is not base64; entries are separated by commas: /,
      ],
      // A key with two padding characters and no name: the text before an `=` is no name.
      [
        { CKPT_KEYS: `${K1.subarray(0, 31).toString('base64')}=x` },
        2,
        /^ckpt: error: CKPT_KEYS: entry 1 is not name=<base64 key>/,
      ],
      [
        { CKPT_KEYS: ' , ' },
        2,
        /^ckpt: error: CKPT_KEYS holds no key; give each key as name=<32 bytes in base64>, one a line or separated by commas/,
      ],
      [
        { CKPT_COMPRESS: 'lz4' },
        2,
        /^ckpt: error: CKPT_COMPRESS must be one of gzip, deflate, brotli, zstd, none, got "lz4"\.\n$/,
      ],
    ];
    for (const [env, code, message] of cases) {
      const run = await ckpt(['--store', url, 'history', 's'], { env });
      expect({ env, code: run.code }).toEqual({ env, code });
      expect(run.stderr).toMatch(message);
      expectNoKeys(run);
      expect(run.stderr).not.toContain(short);
    }
    const badFlag = await ckpt(['--store', url, '--compress', 'lz4', 'history', 's']);
    expect(badFlag.code).toBe(2);
    expect(badFlag.stderr).toContain('compress must be one of gzip, deflate, brotli, zstd, none');
  });

  it('refuses keys given as --key-file, without showing them, and says where keys go', async () => {
    for (const given of [
      `k3=${K1.toString('base64')}`,
      `k2=${K2.toString('base64')},k1=${K1.toString('base64')}`,
    ]) {
      for (const [args, env] of [
        [['--key-file', given, '--store', url, 'sessions'], {}],
        [[`--key-file=${given}`, '--store', url, 'sessions'], {}],
        [['--store', url, 'sessions'], { CKPT_KEY_FILE: given }],
      ] as [string[], Record<string, string>][]) {
        const run = await ckpt(args, { env });
        expect(run.code).toBe(2);
        expect(run.stderr).toMatch(
          /^ckpt: error: --key-file \(or CKPT_KEY_FILE\) takes the path of a file.*keys go in CKPT_KEYS or in that file, never on the command line/,
        );
        expect(run.stderr.split('\n')).toHaveLength(2);
        expect(run.stderr).not.toContain(given.slice(3));
        expectNoKeys(run);
      }
    }
  });

  it('says keys are never an argument when given --key or --keys', async () => {
    for (const option of ['--key', '--keys', `--key=${K1.toString('base64')}`]) {
      const run = await ckpt(['--store', url, option, 'sessions']);
      expect(run.code).toBe(2);
      expect(run.stderr).toMatch(
        /^ckpt: error: unknown option '--keys?(=…)?' \(keys come from CKPT_KEYS or from a file named by --key-file <path>, never from an argument/,
      );
      expect(run.stderr.split('\n')).toHaveLength(2);
      expectNoKeys(run);
    }
  });

  it('refuses a key file or CKPT_KEYS that holds no key, writing nothing', async () => {
    const store = `sqlite:${join(dir, 'no-key.db')}`;
    const seeded = await openStore(store);
    await seeded.checkpoint('s', { n: 1 });
    await seeded.close();
    const before = await rawValues(store);
    for (const text of ['', '# keys\n\n# none yet\n']) {
      const keyFile = join(dir, `${unique()}.keys`);
      writeFileSync(keyFile, text);
      chmodSync(keyFile, 0o600);
      for (const args of [
        ['state', 'prefs', 'set', 'k', '{"secret":1}'],
        ['rekey'],
        ['doctor'],
        ['doctor', '--json'],
      ]) {
        const run = await ckpt(['--store', store, '--key-file', keyFile, ...args]);
        expect({ args, code: run.code }).toEqual({ args, code: 2 });
        expect(run.stderr).toBe(
          `ckpt: error: key file ${keyFile} holds no key; give each key as name=<32 bytes in base64>, one a line or separated by commas (k2=<base64>,k1=<base64>), such as k1=$(openssl rand -base64 32).\n`,
        );
      }
    }
    expect(await rawValues(store)).toEqual(before);
  });

  it('doctor warns of plain values beside encrypted ones, or when keys are given, and says to rekey', async () => {
    const mixed = `sqlite:${join(dir, 'mixed.db')}`;
    const sealing = await openStore(mixed, K1_CODECS);
    await sealing.checkpoint('sealed', { n: 1 });
    await sealing.close();
    const plain = await openStore(mixed);
    await plain.checkpoint('open', { n: 2 });
    await plain.close();
    const values = async (store: string, env: Record<string, string>, strict: string[]) => {
      const run = await ckpt(['--store', store, 'doctor', '--json', ...strict], { env });
      expectNoKeys(run);
      const found = JSON.parse(run.stdout) as DoctorFinding[];
      return { code: run.code, values: found.filter((d) => d.check === 'values') };
    };
    const warned = expect.objectContaining({
      status: 'warn',
      detail: expect.stringMatching(/^1 of the 2 values sampled is plain JSON, not encrypted/),
      fix: expect.stringMatching(/^run ckpt rekey with the keys .*CKPT_KEYS.* to encrypt them\.$/),
      at: ['session "open" checkpoint 1'],
    });
    expect(await values(mixed, k1Only, [])).toEqual({ code: 0, values: [warned] });
    expect(await values(mixed, k1Only, ['--strict'])).toEqual({ code: 7, values: [warned] });

    const allPlain = `sqlite:${join(dir, 'all-plain.db')}`;
    const store = await openStore(allPlain);
    await store.checkpoint('a', { n: 1 });
    await store.checkpoint('b', { n: 1 });
    await store.close();
    const keyed = await values(allPlain, k1Only, ['--strict']);
    expect(keyed.code).toBe(7);
    expect(keyed.values).toEqual([
      expect.objectContaining({
        status: 'warn',
        detail: expect.stringMatching(
          /^2 of the 2 values sampled are plain JSON, not encrypted, in a store given keys/,
        ),
      }),
    ]);
    // Without keys, a store of plain values is as it was meant to be.
    const unkeyed = await values(allPlain, {}, ['--strict']);
    expect(unkeyed).toEqual({ code: 0, values: [expect.objectContaining({ status: 'ok' })] });

    const text = await ckpt(['--store', mixed, 'doctor'], { env: k1Only });
    expect(text.stdout).toMatch(
      /^! values +1 of the 2 values sampled is plain JSON.*\n +→ run ckpt rekey/m,
    );
  });

  it('says a damaged value is damaged in the singular when it is one', async () => {
    const damaged = `sqlite:${join(dir, 'damaged.db')}`;
    const store = await openStore(damaged);
    await store.checkpoint('s', { n: 1 });
    await store.backend.stateSet('zz', 'broken', 'ckpt1;gzip;zz;AAAA');
    await store.close();
    const run = await ckpt(['--store', damaged, 'doctor', '--json']);
    expect(run.code).toBe(7);
    const found = JSON.parse(run.stdout) as DoctorFinding[];
    expect(found.find((d) => d.check === 'values')?.detail).toMatch(
      /^1 of the 2 values sampled is damaged, or was moved from another session after it was written \(state key "broken" of scope "zz"\)\.$/,
    );
  });

  it('refuses zstd on a Node without it as a usage error naming the others', async () => {
    const hasZstd = 'zstdCompressSync' in (await import('node:zlib'));
    for (const [args, env] of [
      [['--compress', 'zstd'], {}],
      [[], { CKPT_COMPRESS: 'zstd' }],
    ] as [string[], Record<string, string>][]) {
      const run = await ckpt(['--store', url, ...args, 'state', 'z', 'set', 'k', '1'], {
        env: { ...k1Only, ...env },
      });
      if (hasZstd) {
        expect(run.code).toBe(0);
        continue;
      }
      expect(run.code).toBe(2);
      expect(run.stderr).toBe(
        `ckpt: error: zstd compression needs Node 22.15 or later, and this is Node ${process.version}; compress with gzip, deflate or brotli.\n`,
      );
    }
  });

  it('doctor warns of a key file that group or others can read, and says to chmod 600 it', async () => {
    const keyFile = join(dir, 'doctor.keys');
    writeFileSync(keyFile, `k1=${K1.toString('base64')}\n`);
    chmodSync(keyFile, 0o640);
    const loose = await ckpt(['--store', url, '--key-file', keyFile, 'doctor']);
    expect(loose.code).toBe(0);
    expect(loose.stdout).toMatch(
      /^! key file +the key file .*doctor\.keys can be read by its group or others \(mode 0640\)/m,
    );
    expect(loose.stdout).toContain(`→ chmod 600 ${keyFile}\n`);
    const strict = await ckpt(['--store', url, 'doctor', '--strict', '--json'], {
      env: { CKPT_KEY_FILE: keyFile },
    });
    expect(strict.code).toBe(7);
    expect(JSON.parse(strict.stdout)).toContainEqual(
      expect.objectContaining({ check: 'key file', status: 'warn', fix: `chmod 600 ${keyFile}` }),
    );
    chmodSync(keyFile, 0o600);
    const tight = await ckpt(['--store', url, 'doctor', '--json'], {
      env: { CKPT_KEY_FILE: keyFile },
    });
    expect(tight.code).toBe(0);
    expect(JSON.parse(tight.stdout)).toContainEqual(
      expect.objectContaining({ check: 'key file', status: 'ok' }),
    );
    // Keys from the environment are no file to check.
    const fromEnv = JSON.parse(
      (await ckpt(['--store', url, 'doctor', '--json'], { env: k1Only })).stdout,
    );
    expect(fromEnv.map((d: DoctorFinding) => d.check)).not.toContain('key file');
    for (const run of [loose, strict, tight]) expectNoKeys(run);
  });

  it('shows no key in any output of any command, with the keys or with a wrong one', async () => {
    const sealed = `sqlite:${join(dir, 'every-command.db')}`;
    const store = await openStore(sealed, K1_CODECS);
    await fill(store);
    await store.close();
    const keyFile = join(dir, 'every-command.keys');
    writeFileSync(keyFile, `k1=${K1.toString('base64')}\nk2=${K2.toString('base64')}\n`);
    chmodSync(keyFile, 0o644);
    const copyTo = () => `sqlite:${join(dir, `every-command-${unique()}.db`)}`;
    const commands = [
      ['sessions', '--all'],
      ['show', 'main'],
      ['show', 'main', '--seq', '5', '--json'],
      ['tree', 'main'],
      ['tree', 'main', '--json'],
      ['transcript', 'main'],
      ['history', 'main', '--json'],
      ['diff', 'main', '5', '7'],
      ['state', 'prefs', 'keys'],
      ['state', 'prefs', 'get', 'k', '--json'],
      ['export'],
      ['doctor'],
      ['doctor', '--json'],
      ['copy', '--from', sealed, '--to', 'to-be-made'],
      ['fork', 'main', '--new-id', 'forked'],
      ['state', 'prefs', 'set', 'new', '{"a":1}'],
      ['rekey', '--json'],
    ];
    const envs: Record<string, string>[] = [
      { CKPT_KEY_FILE: keyFile, CKPT_KEY_CURRENT: 'k2', CKPT_COMPRESS: 'gzip' },
      { CKPT_KEYS: `k1=${K2.toString('base64')}` },
    ];
    const runs: Run[] = [];
    for (const env of envs) {
      for (const command of commands) {
        const args = command.map((arg) => (arg === 'to-be-made' ? copyTo() : arg));
        runs.push(await ckpt(['--store', sealed, ...args], { env }));
      }
    }
    // The commands did run: with the key they read and write, without it they refuse.
    expect(runs.slice(0, commands.length).map((run) => run.code)).toEqual(commands.map(() => 0));
    expect(runs.filter((run) => run.code === 6).length).toBeGreaterThanOrEqual(6);
    for (const run of runs) expectNoKeys(run);
  }, 300_000);

  it('rekey without codecs to write under is a usage error that changes nothing', async () => {
    const stored = await rawValues(url);
    const run = await ckpt(['--store', url, 'rekey']);
    expect(run.code).toBe(2);
    expect(run.stderr).toMatch(/^ckpt: error: rekey needs codecs to write under/);
    expect(await rawValues(url)).toEqual(stored);
  });

  it('rekey with a key missing for some value fails UNREADABLE, saying which', async () => {
    const run = await ckpt(['--store', url, 'rekey'], {
      env: { CKPT_KEYS: `k2=${K2.toString('base64')}` },
    });
    expect(run.code).toBe(6);
    expect(run.stderr).toMatch(/^ckpt: error UNREADABLE: .*key "k1"/);
    expectNoKeys(run);
  });
});
