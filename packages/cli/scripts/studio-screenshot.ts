/**
 * `pnpm --filter @ckpt/cli screenshot`: the picture of ckpt studio in this package's README
 * (docs/studio.png), taken as the browser test takes it: the demo's store, the built command,
 * Debian's Chromium.
 */
import { mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { fileURLToPath } from 'node:url';
import { buildCli } from '../test/support/binary.js';
import { runDemo } from '../test/support/demo.js';
import { launchBrowser, startStudio } from '../test/support/studio.js';
import { screenshotDemo } from '../test/support/studio-screenshot.js';

const out = fileURLToPath(new URL('../docs/studio.png', import.meta.url));
const dir = mkdtempSync(join(tmpdir(), 'ckpt-studio-screenshot-'));
try {
  buildCli();
  const url = `sqlite:${join(dir, 'agent.db')}`;
  runDemo(url);
  const studio = await startStudio(url);
  const browser = await launchBrowser();
  try {
    const page = await browser.newPage();
    await page.goto(studio.url);
    await screenshotDemo(page, studio.origin, out);
  } finally {
    await browser.close();
    await studio.stop();
  }
  console.log(`wrote ${out}`);
} finally {
  rmSync(dir, { recursive: true, force: true });
}
