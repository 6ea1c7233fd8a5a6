/** Headless Chromium for the console tests: the binary ships inside @sparticuz/chromium (npm). */
import { mkdirSync } from 'node:fs';
import chromium from '@sparticuz/chromium';
import { type Browser, type Page, chromium as playwright } from 'playwright-core';

/** Where screenshots of each page are written (for the reader of a test run). */
export const SHOTS_DIR = '/tmp/console-shots';

/**
 * The package's flags are tuned for serverless hosts: single-process (browser contexts would share
 * cookies) and web security off (CSP, CORS and same-origin checks would not run). The tests need
 * a browser that enforces what a user's browser enforces, so those flags are dropped.
 */
const UNSAFE_FLAGS = new Set([
  '--single-process',
  '--no-zygote',
  '--disable-web-security',
  '--allow-running-insecure-content',
  '--disable-site-isolation-trials',
]);

/**
 * Launches headless Chromium from the npm package (no download, no network); `env` replaces the
 * browser's environment (e.g. its LANG, which decides `navigator.language`).
 */
export async function launchBrowser(env?: NodeJS.ProcessEnv): Promise<Browser> {
  return playwright.launch({
    executablePath: await chromium.executablePath(),
    args: chromium.args.filter(
      (flag) => !UNSAFE_FLAGS.has(flag) && !flag.startsWith('--disable-features='),
    ),
    headless: true,
    ...(env ? { env: env as Record<string, string> } : {}),
  });
}

/** A full-page screenshot to SHOTS_DIR/<name>.png. */
export async function shot(page: Page, name: string): Promise<void> {
  mkdirSync(SHOTS_DIR, { recursive: true });
  await page.screenshot({ path: `${SHOTS_DIR}/${name}.png`, fullPage: true });
}
