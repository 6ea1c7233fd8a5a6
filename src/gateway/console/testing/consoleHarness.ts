/**
 * A gateway with a stub buyer (the control plane below), headless Chromium and the steps the
 * console tests share: pages, sign-ins, requests through a key, fetches from inside a page.
 * `consoleHarness()` starts both before the calling test file's tests and stops them after.
 */
import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, expect } from 'vitest';
import { waitFor } from '../../../testing/index.js';
import { type Harness, startHarness } from '../../testing/harness.js';
import { STUB_PEER_ID } from '../../testing/stubBuyer.js';
import { createLoginLink } from '../index.js';
import { launchBrowser } from './browser.js';

/** What a buyer's control plane says about the network (spec 4.6 shapes, trimmed). */
const CONTROL_PLANE = {
  status: {
    reachability: 'online',
    peerCount: 1,
    reachablePeerCount: 1,
    lastRefreshAt: 1_700_000_000_000,
  },
  peers: {
    total: 1,
    peers: [
      {
        peerId: STUB_PEER_ID,
        region: 'eu-west',
        reachable: true,
        reputationScore: 87,
        recentFailures: 0,
        coolingDown: false,
        offers: [
          {
            model: 'model-a',
            prices: {
              inputUsdPerMillion: 2,
              outputUsdPerMillion: 8,
              cachedInputUsdPerMillion: 0.5,
            },
          },
        ],
      },
    ],
  },
  channels: {
    channels: [
      {
        channelId: '0xchan1',
        identity: 'default',
        seller: STUB_PEER_ID,
        status: 'open',
        signedMicro: '1234567',
        requests: 3,
      },
    ],
  },
};

export function consoleHarness() {
  let harness: Harness | undefined;
  let browser: Browser | undefined;
  const contexts: BrowserContext[] = [];
  beforeAll(async () => {
    harness = await startHarness({ buyer: { costUsd: '0.000300', controlPlane: CONTROL_PLANE } });
    browser = await launchBrowser();
  });
  afterAll(async () => {
    await browser?.close();
    await harness?.stop();
  });
  const started = () => {
    if (!harness || !browser) throw new Error('the console harness starts in beforeAll');
    return { h: harness, browser };
  };

  async function newPage(): Promise<Page> {
    const context = await started().browser.newContext({
      viewport: { width: 1280, height: 800 },
      locale: 'en-US',
      timezoneId: 'UTC',
    });
    context.setDefaultTimeout(10_000);
    contexts.push(context);
    return context.newPage();
  }

  const chat = (secret: string, user?: string) =>
    started().h.call('/v1/chat/completions', {
      secret,
      method: 'POST',
      body: JSON.stringify({
        model: 'model-a',
        messages: [{ role: 'user', content: 'hi' }],
        ...(user ? { user } : {}),
      }),
    });

  async function keyWithRequests(label: string, requests: number, user?: string) {
    const created = await started().h.key({ label, limits: { daily: 1_000_000n } });
    for (let i = 0; i < requests; i++) expect((await chat(created.secret, user)).status).toBe(200);
    await waitFor(
      async () =>
        (await started().h.store.queryLogs({ keyId: created.key.id })).length === requests,
    );
    return created;
  }

  async function signInWithKey(page: Page, secret: string) {
    await page.goto(`${started().h.gateway.url}/console/`);
    await page.fill('#key', secret);
    await page.press('#key', 'Enter');
    await page.waitForSelector('#card-requests');
  }

  async function signInAsOperator(page: Page, member: string | null = null) {
    const link = await createLoginLink(started().h.store, member, Date.now());
    await page.goto(`${started().h.gateway.url}/console/login?token=${link.token}`);
    await page.waitForSelector('#sign-out');
  }

  /** Runs fetch inside the page (its cookies, its origin) and returns status and body. */
  function pageFetch(
    page: Page,
    path: string,
    init: { method?: string; csrf?: boolean; body?: unknown } = {},
  ) {
    return page.evaluate(
      async ({ path, init }) => {
        const headers: Record<string, string> = { 'content-type': 'application/json' };
        if (init.csrf) {
          const view = (await (await fetch('/console/api/view/home')).json()) as {
            session: { csrfToken: string };
          };
          headers['x-csrf-token'] = view.session.csrfToken;
        }
        const response = await fetch(path, {
          method: init.method ?? 'GET',
          headers,
          body: init.method === 'POST' ? JSON.stringify(init.body ?? {}) : undefined,
        });
        return { status: response.status, text: await response.text() };
      },
      { path, init },
    );
  }

  /**
   * Opens a console page with a full navigation (a hash change after the sign-in page would
   * render twice, and the second render would replace the DOM under the test's clicks).
   */
  async function openPage(page: Page, name: string) {
    await page.goto(`${started().h.gateway.url}/console/?page=${name}#/${name}`);
    await page.waitForSelector(`[aria-current="page"][href="#/${name}"]`);
  }

  const rowOf = (page: Page, label: string) => page.locator('tbody tr', { hasText: label });

  return {
    get h(): Harness {
      return started().h;
    },
    newPage,
    chat,
    keyWithRequests,
    signInWithKey,
    signInAsOperator,
    pageFetch,
    openPage,
    rowOf,
  };
}
