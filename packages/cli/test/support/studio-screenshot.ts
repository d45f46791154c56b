/**
 * The picture of the studio in the CLI's README: the demo's session, its tree with the
 * branch a rollback left and the fork, one checkpoint picked with its diff. The browser test
 * takes it, and `pnpm --filter @ckpt/cli screenshot` writes it into docs/.
 */
import type { Page } from 'playwright-core';

/** The size of the picture, in CSS pixels. */
export const SCREENSHOT_SIZE = { width: 1280, height: 720 };

/** Show the demo's session in `page` (of a studio on the demo's store at `origin`) and take the picture into `path`. */
export async function screenshotDemo(page: Page, origin: string, path: string): Promise<void> {
  await page.setViewportSize(SCREENSHOT_SIZE);
  await page.emulateMedia({ colorScheme: 'light', reducedMotion: 'reduce' });
  await page.goto(`${origin}/sessions/trip-planner?seq=4`);
  await page.locator('svg.tree [data-seq="3"]').waitFor();
  // Each checkpoint drawn with its time, read once the tree is drawn. Polled from here:
  // waitForFunction polls a string by eval in the page, which the studio's CSP refuses (a first
  // check that passed at once hid it, until a busy machine made the page late).
  const timed =
    "document.querySelectorAll('svg.tree .node').length === document.querySelectorAll('svg.tree .node .time').length";
  for (const deadline = Date.now() + 30_000; !(await page.evaluate<boolean>(timed)); ) {
    if (Date.now() > deadline)
      throw new Error('the tree never showed every checkpoint with its time');
    await page.waitForTimeout(20);
  }
  await page.locator('ul.diff li').first().waitFor();
  await page.screenshot({ path });
}
