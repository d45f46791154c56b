/**
 * What stays of the values `ckpt rekey` replaced, read as bytes from a SQLite file after rekeying
 * a store of plain values: none with --vacuum; elsewhere than at a terminal, the command says
 * what may stay and the command that writes the file anew, which doctor warns of until then.
 * Other backends say where their copies stay, and refuse --vacuum.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { openStore } from '@ckpt/core';
import { URL_STORES } from '@ckpt/test-stores';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { buildCli, ckpt } from './support/binary.js';
import { madeStores } from './support/made-stores.js';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-leftovers-'));
const stores = madeStores('cli_leftovers');
beforeAll(buildCli, 300_000);
afterAll(async () => {
  await stores.destroyAll();
  rmSync(dir, { recursive: true, force: true });
});

const KEYS = { CKPT_KEYS: `k1=${Buffer.alloc(32, 3).toString('base64')}` };
const VALUES = 200;
/** A card number anyone would recognise in the file's bytes. */
const card = (i: number) => `4000 1234 5678 ${String(i).padStart(4, '0')}`;
let files = 0;

/**
 * A SQLite store of plain values: a card in each of VALUES sessions, and in as many state
 * values; and 20 more sessions deleted before the rekey, whose cards are in its free space.
 */
async function plainStore(): Promise<{ url: string; path: string }> {
  const path = join(dir, `${files++}.db`);
  const url = `sqlite:${path}`;
  const store = await openStore(url);
  for (let i = 0; i < VALUES + 20; i++) {
    await store.checkpoint(`s${i}`, { card: card(i), notes: 'n'.repeat(i * 10) });
  }
  for (let i = VALUES; i < VALUES + 20; i++) await store.delete(`s${i}`);
  for (let i = 0; i < VALUES; i++) await store.state('cards').set(`c${i}`, card(i));
  await store.close();
  return { url, path };
}

/** The cards still readable in the file and its -wal. */
function cardsIn(path: string): number[] {
  const files = [path, `${path}-wal`].filter(existsSync).map((file) => readFileSync(file));
  const bytes = Buffer.concat(files).toString('latin1');
  return Array.from({ length: VALUES + 20 }, (_, i) => i).filter((i) => bytes.includes(card(i)));
}

/** What `ckpt doctor --json` with the keys says of the file's free space. */
async function freeSpace(url: string) {
  const run = await ckpt(['--store', url, 'doctor', '--json'], { env: KEYS });
  const found = JSON.parse(run.stdout) as { check: string; status: string; fix?: string }[];
  return found.find((finding) => finding.check === 'free space');
}

const REKEYED = `rekeyed ${VALUES} checkpoints and ${VALUES} state values in [\\d.]+ s; every value is now under aes-256-gcm with key k1\\.\\n`;

describe('ckpt rekey on a SQLite store of plain values', () => {
  it('with --vacuum writes the file anew: none of the plain values is left in it', async () => {
    const { url, path } = await plainStore();
    expect(cardsIn(path).length).toBeGreaterThan(VALUES);
    const run = await ckpt(['--store', url, 'rekey', '--vacuum'], { env: KEYS });
    expect(run.code).toBe(0);
    expect(run.stderr).toMatch(
      new RegExp(
        `^${REKEYED}vacuumed ".*": it holds only what is stored, and its -wal file is empty\\.\\n$`,
      ),
    );
    expect(cardsIn(path)).toEqual([]);
    expect(await freeSpace(url)).toMatchObject({ status: 'ok' });
  });

  it('elsewhere than at a terminal says what may be left and how to write the file anew; doctor warns until then', async () => {
    const { url, path } = await plainStore();
    const run = await ckpt(['--store', url, 'rekey'], { env: KEYS });
    expect(run.code).toBe(0);
    const again = `ckpt --store ${url} rekey --vacuum`;
    expect(run.stderr).toMatch(
      new RegExp(
        `^${REKEYED}Values replaced or deleted while nothing overwrote them .* may remain in ".*": in its free pages and the unused space of its pages until VACUUM writes the file anew, and in its -wal file until SQLite writes over it\\. To write it anew, run ${again.replaceAll('/', '\\/')}\\.\\n$`,
      ),
    );
    // The rewrite overwrote each value it replaced; the cards deleted before it stay.
    const left = cardsIn(path);
    expect(left.filter((i) => i >= VALUES)).not.toEqual([]);
    expect(await freeSpace(url)).toMatchObject({
      status: 'warn',
      fix: expect.stringMatching(/^write the file anew: ckpt rekey --vacuum/),
    });

    const vacuum = await ckpt(['--store', url, 'rekey', '--vacuum'], { env: KEYS });
    expect(vacuum.stderr).toMatch(/^rekeyed 0 checkpoints and 0 state values .*\nvacuumed /);
    expect(cardsIn(path)).toEqual([]);
    expect(await freeSpace(url)).toMatchObject({ status: 'ok' });
  });
});

describe.each(URL_STORES.filter((backend) => backend.name !== 'sqlite'))(
  'ckpt rekey on $name',
  (backend) => {
    it('says where the values it replaced remain, and refuses --vacuum, rewriting nothing', async () => {
      const url = stores.track(backend.url(stores.unique(), dir));
      const store = await openStore(url);
      await store.checkpoint('s', { card: card(1) });
      await store.close();
      const refused = await ckpt(['--store', url, 'rekey', '--vacuum'], { env: KEYS });
      expect(refused.code).toBe(2);
      expect(refused.stderr).toMatch(
        /^ckpt: error: --vacuum writes a SQLite file anew; the \w+ backend has no such step\. .+ Nothing was rewritten\.\n$/,
      );
      const run = await ckpt(['--store', url, 'rekey'], { env: KEYS });
      expect(run.code).toBe(0);
      const [, note] = run.stderr.split('\n');
      expect(note).toMatch(
        backend.name === 'redis'
          ? /^Nothing remains in Redis's memory: each value was replaced\. .*BGREWRITEAOF/
          : backend.name === 'postgres'
            ? /^Replaced values remain in dead row versions of .* until VACUUM .*VACUUM FULL/
            : /^Replaced values remain in InnoDB's undo logs until purge .*OPTIMIZE TABLE/,
      );
    });
  },
);
