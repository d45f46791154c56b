/**
 * A store that encrypts: every connection of its backend, the writer thread's too, overwrites what
 * it deletes (secure_delete), so that a plain value written before and deleted after leaves no
 * copy in the file; what doctor's check says of a file that may hold values from before; and
 * `leftovers().reclaim()`, VACUUM, after which none remains. The file is read as bytes.
 */
import { existsSync, mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { CheckpointStore, encrypt } from '@ckpt/core';
import { sqlite } from '@ckpt/sqlite';
import { afterAll, describe, expect, it } from 'vitest';

const dir = mkdtempSync(join(tmpdir(), 'ckpt-sqlite-secure-delete-'));
let files = 0;
const fresh = () => join(dir, `${files++}.db`);
afterAll(() => rmSync(dir, { recursive: true, force: true }));

const SEALED = { codecs: [encrypt({ keys: { k1: Buffer.alloc(32, 1) }, current: 'k1' })] };
const VALUES = 200;
/** A value anyone would recognise in the file's bytes. */
const card = (i: number) => `4000 1234 5678 ${String(i).padStart(4, '0')}`;

/** How many times each card is in the file and its -wal, as bytes. */
function copiesOf(path: string): number[] {
  const files = [path, `${path}-wal`].filter(existsSync).map((file) => readFileSync(file));
  const bytes = Buffer.concat(files).toString('latin1');
  return Array.from({ length: VALUES }, (_, i) => bytes.split(card(i)).length - 1);
}

/** A file of VALUES sessions, each a checkpoint of a plain card, written by a store without codecs. */
async function plainFile(): Promise<string> {
  const path = fresh();
  const plain = new CheckpointStore(sqlite({ path }));
  for (let i = 0; i < VALUES; i++) {
    await plain.checkpoint(`s${i}`, { card: card(i), notes: 'n'.repeat(i * 20) });
  }
  await plain.close();
  return path;
}

const freeSpace = async (backend: ReturnType<typeof sqlite>) =>
  (await backend.diagnose()).find((finding) => finding.check === 'free space');

for (const worker of [true, false]) {
  it(`overwrites what it deletes once a store encrypts, on every connection (worker: ${worker})`, async () => {
    const path = await plainFile();
    const before = copiesOf(path);
    const backend = sqlite({ path, worker });
    // A store without codecs writes first: the writer thread runs before it is told.
    await new CheckpointStore(backend).checkpoint('first', { plain: true });
    expect(backend.db.pragma('secure_delete', { simple: true })).toBe(0);
    const sealed = new CheckpointStore(backend, SEALED);
    expect(backend.db.pragma('secure_delete', { simple: true })).toBe(1);
    for (let i = 0; i < VALUES; i += 2) await sealed.delete(`s${i}`);
    await sealed.close();

    const after = copiesOf(path);
    const deleted = before.map((_, i) => i).filter((i) => i % 2 === 0);
    // Each deleted value's own row is overwritten. Only copies SQLite made of a row earlier,
    // when it moved rows between pages while it did not overwrite, may stay: VACUUM's to remove.
    const single = deleted.filter((i) => before[i] === 1);
    expect(single.length).toBeGreaterThan(VALUES / 4);
    expect(single.filter((i) => after[i]! > 0)).toEqual([]);
    for (const i of deleted) expect(after[i], card(i)).toBeLessThan(before[i]!);
    // The kept ones are all there.
    for (let i = 1; i < VALUES; i += 2) expect(after[i], card(i)).toBeGreaterThan(0);
  });
}

describe('doctor on a store that encrypts, and VACUUM', () => {
  it('finds a file made by a store that encrypts clean', async () => {
    const backend = sqlite({ path: fresh() });
    const store = new CheckpointStore(backend, SEALED);
    await store.checkpoint('s', { card: card(1) });
    expect(await freeSpace(backend)).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/was created by a store that encrypts at \S+Z; since then/),
    });
    await store.close();
  });

  it('checks nothing of a store that does not encrypt', async () => {
    const backend = sqlite({ path: await plainFile() });
    const store = new CheckpointStore(backend);
    expect(await freeSpace(backend)).toBeUndefined();
    await store.close();
  });

  it('warns of a file written before its store encrypted, until VACUUM writes it anew and no plain value remains', async () => {
    const path = await plainFile();
    const backend = sqlite({ path });
    const store = new CheckpointStore(backend, SEALED);
    expect(await store.reencode()).toEqual({ checkpoints: VALUES, state: 0 });
    expect(await freeSpace(backend)).toMatchObject({
      status: 'warn',
      detail: expect.stringMatching(
        /has not been written anew since its values were encrypted: values stored or replaced before, plain ones among them, may remain/,
      ),
      fix: expect.stringMatching(/^write the file anew: ckpt rekey --vacuum/),
    });
    const leftovers = backend.leftovers();
    expect(leftovers.remain).toMatch(/may remain in ".*": in its free pages/);
    expect(await leftovers.reclaim!()).toBe(
      `vacuumed ${JSON.stringify(path)}: it holds only what is stored, and its -wal file is empty.`,
    );
    expect(copiesOf(path).filter((n) => n > 0)).toEqual([]);
    expect(await freeSpace(backend)).toMatchObject({
      status: 'ok',
      detail: expect.stringMatching(/was written anew \(VACUUM\) by a store that encrypts at/),
    });
    expect((await store.load('s7'))?.data).toEqual({ card: card(7), notes: 'n'.repeat(140) });
    await store.close();
  });
});
