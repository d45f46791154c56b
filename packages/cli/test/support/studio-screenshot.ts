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
  // Each checkpoint drawn with its time, read once the tree is drawn.
  await page.waitForFunction(
    "document.querySelectorAll('svg.tree .node').length === document.querySelectorAll('svg.tree .node .time').length",
  );
  await page.locator('ul.diff li').first().waitFor();
  await page.screenshot({ path });
}
