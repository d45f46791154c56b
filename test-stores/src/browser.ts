/**
 * The browser the browser tests drive: Debian's Chromium (`.ci/run` installs it), or the one
 * CKPT_CHROMIUM names, headless through playwright-core, reaching nothing but what it is sent to.
 */
import { existsSync } from 'node:fs';
import { type Browser, chromium } from 'playwright-core';

/** The Chromium the browser tests drive: Debian's, or CKPT_CHROMIUM. */
export const CHROMIUM = process.env.CKPT_CHROMIUM || '/usr/bin/chromium';

/** Whether there is a Chromium to drive. */
export const chromiumFound = existsSync(CHROMIUM);

/** A headless Chromium that reaches nothing but what it is sent to, with a fresh profile. */
export function launchBrowser(): Promise<Browser> {
  return chromium.launch({
    executablePath: CHROMIUM,
    headless: true,
    args: [
      '--no-sandbox',
      '--disable-gpu',
      '--disable-background-networking',
      '--disable-quic',
      '--no-first-run',
      '--disable-component-update',
      '--disable-sync',
    ],
  });
}
