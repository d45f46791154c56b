/**
 * The READMEs show commands (`ckpt tree`, `transcript`, `diff`) on the demo's session as the
 * command prints them: run the demo, run the built command on its store, and hold each
 * README's block to what came out (times aside, which differ from run to run).
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

/**
 * Each `text` block in `readme` that shows a command on the demo's session: the command's
 * arguments (its store left out) and the lines it shows.
 */
function demoBlocks(readme: string): { args: string[]; lines: string[] }[] {
  const text = readFileSync(join(root, readme), 'utf8');
  return [...text.matchAll(/```text\n\$ ckpt ([^\n]*trip-planner[^\n]*)\n([\s\S]*?)```/g)].map(
    (m) => ({
      args: m[1]!.replace(/ --store \S+/, '').split(' '),
      lines: m[2]!.trimEnd().split('\n'),
    }),
  );
}

it.each([
  ['README.md', ['tree']],
  ['packages/cli/README.md', ['tree', 'transcript', 'diff']],
])('%s shows the commands on the demo session as they print it', async (readme, commands) => {
  const blocks = demoBlocks(readme);
  expect(blocks.map((b) => b.args[0])).toEqual(commands);
  for (const { args, lines } of blocks) {
    const printed = await ckpt(['--store', url, ...args]);
    expect(printed.code).toBe(0);
    expect(
      printed.stdout
        .trimEnd()
        .split('\n')
        .map((l) => l.replace(TIME, 'TIME')),
      args.join(' '),
    ).toEqual(lines.map((l) => l.replace(TIME, 'TIME')));
  }
});
