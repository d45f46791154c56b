/**
 * The READMEs show `ckpt tree` on the demo's session as the command prints it: run the demo,
 * run the built command on its store, and hold each README's block to what came out (times
 * aside, which differ from run to run).
 */
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { afterAll, beforeAll, expect, it } from 'vitest';
import { buildCli, ckpt } from './support/binary.js';
import { runDemo } from './support/demo.js';

const root = fileURLToPath(new URL('../../../', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ckpt-cli-readme-'));
afterAll(() => rmSync(dir, { recursive: true, force: true }));
const url = `sqlite:${join(dir, 'agent.db')}`;

beforeAll(() => {
  buildCli();
  runDemo(url);
}, 300_000);

const TIME = /\d{4}-\d\d-\d\d \d\d:\d\d:\d\dZ/g;

/** The lines of the `text` block in `readme` that starts with `$ ckpt tree`, the command line aside. */
function treeBlock(readme: string): string[] {
  const text = readFileSync(join(root, readme), 'utf8');
  const block = /```text\n\$ ckpt tree trip-planner[^\n]*\n([\s\S]*?)```/.exec(text);
  expect(block, `${readme} shows ckpt tree on the demo's session`).not.toBeNull();
  return block![1]!.trimEnd().split('\n');
}

it.each(['README.md', 'packages/cli/README.md'])(
  '%s shows ckpt tree on the demo session as the command prints it',
  async (readme) => {
    const printed = await ckpt(['--store', url, 'tree', 'trip-planner']);
    expect(printed.code).toBe(0);
    const lines = printed.stdout.trimEnd().split('\n');
    expect(lines.map((l) => l.replace(TIME, 'TIME'))).toEqual(
      treeBlock(readme).map((l) => l.replace(TIME, 'TIME')),
    );
  },
);
