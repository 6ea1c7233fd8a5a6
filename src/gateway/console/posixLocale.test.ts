/**
 * The console in a browser whose locale is a POSIX one: headless Chromium started with
 * LANG=C.UTF-8 reports `navigator.language` as `en-US@posix`, a tag `Intl.NumberFormat` refuses.
 * The charts must still render (uPlot formats its axes with that locale). No locale is pinned
 * here, unlike the other console tests, so the browser's own is what the page sees.
 */
import type { Browser } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, startHarness } from '../testing/harness.js';
import { createLoginLink } from './index.js';
import { launchBrowser, shot } from './testing/browser.js';

let h: Harness;
let browser: Browser;

beforeAll(async () => {
  h = await startHarness({ buyer: { costUsd: '0.000300' } });
  const env: NodeJS.ProcessEnv = { ...process.env, LANG: 'C.UTF-8', LANGUAGE: '' };
  delete env.LC_ALL;
  delete env.LC_MESSAGES;
  browser = await launchBrowser(env);
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

describe('console in a POSIX locale', () => {
  it('draws the charts of "My key" and "Usage"', async () => {
    const { secret } = await h.key({ label: 'posix', limits: { daily: 1_000_000n } });
    const served = await h.call('/v1/chat/completions', {
      secret,
      method: 'POST',
      body: JSON.stringify({ model: 'model-a', messages: [{ role: 'user', content: 'hi' }] }),
    });
    expect(served.status).toBe(200);
    const context = await browser.newContext({ timezoneId: 'UTC' });
    context.setDefaultTimeout(10_000);
    const errors: string[] = [];
    try {
      const page = await context.newPage();
      page.on('pageerror', (error) => errors.push(error.message));
      // The browser's own tag, before any console script runs.
      expect(await page.evaluate<string>('navigator.language')).toBe('en-US@posix');
      await page.goto(`${h.gateway.url}/console/`);
      await page.fill('#key', secret);
      await page.press('#key', 'Enter');
      await page.waitForSelector('#card-requests');
      await page.waitForSelector('.chart canvas');
      expect(await page.locator('.chart canvas').count()).toBe(1);
      await shot(page, 'posix-key-overview');

      const admin = await context.newPage();
      admin.on('pageerror', (error) => errors.push(error.message));
      const link = await createLoginLink(h.store, null, Date.now());
      await admin.goto(`${h.gateway.url}/console/login?token=${link.token}`);
      await admin.waitForSelector('#sign-out');
      await admin.goto(`${h.gateway.url}/console/?page=usage#/usage`);
      await admin.waitForSelector('[aria-current="page"][href="#/usage"]');
      await admin.waitForSelector('.chart canvas');
      expect(await admin.locator('.chart canvas').count()).toBe(1);
      await shot(admin, 'posix-usage');
      expect(errors).toEqual([]);
    } finally {
      await context.close();
    }
  });
});
