import type { Browser, BrowserContext, Page } from 'playwright-core';
import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { waitFor } from '../../testing/index.js';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';
import { STUB_PEER_ID } from '../testing/stubBuyer.js';
import { createLoginLink } from './index.js';
import { launchBrowser, shot } from './testing/browser.js';

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

let h: Harness;
let browser: Browser;
const contexts: BrowserContext[] = [];

beforeAll(async () => {
  h = await startHarness({ buyer: { costUsd: '0.000300', controlPlane: CONTROL_PLANE } });
  browser = await launchBrowser();
});
afterAll(async () => {
  await browser?.close();
  await h?.stop();
});

async function newPage(): Promise<Page> {
  const context = await browser.newContext({
    viewport: { width: 1280, height: 800 },
    locale: 'en-US',
    timezoneId: 'UTC',
  });
  context.setDefaultTimeout(10_000);
  contexts.push(context);
  return context.newPage();
}

const chat = (secret: string, user?: string) =>
  h.call('/v1/chat/completions', {
    secret,
    method: 'POST',
    body: JSON.stringify({
      model: 'model-a',
      messages: [{ role: 'user', content: 'hi' }],
      ...(user ? { user } : {}),
    }),
  });

async function keyWithRequests(label: string, requests: number, user?: string) {
  const created = await h.key({ label, limits: { daily: 1_000_000n } });
  for (let i = 0; i < requests; i++) expect((await chat(created.secret, user)).status).toBe(200);
  await waitFor(
    async () => (await h.store.queryLogs({ keyId: created.key.id })).length === requests,
  );
  return created;
}

async function signInWithKey(page: Page, secret: string) {
  await page.goto(`${h.gateway.url}/console/`);
  await page.fill('#key', secret);
  await page.press('#key', 'Enter');
  await page.waitForSelector('#card-requests');
}

async function signInAsOperator(page: Page, member: string | null = null) {
  const link = await createLoginLink(h.store, member, Date.now());
  await page.goto(`${h.gateway.url}/console/login?token=${link.token}`);
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
  await page.goto(`${h.gateway.url}/console/?page=${name}#/${name}`);
  await page.waitForSelector(`[aria-current="page"][href="#/${name}"]`);
}

const rowOf = (page: Page, label: string) => page.locator('tbody tr', { hasText: label });

describe('console: key sign-in', () => {
  it('shows the key’s usage, limits and requests after real requests, read-only', async () => {
    const { key, secret } = await keyWithRequests('usage-key', 2, 'eve');
    const page = await newPage();
    await signInWithKey(page, secret);
    expect(await page.locator('#key').count()).toBe(0);
    expect(await page.textContent('#card-requests dd')).toBe('2');
    expect(await page.textContent('#card-spent dd')).toBe('$0.000600');
    const daily = await page.locator('.limit', { hasText: 'daily' }).textContent();
    expect(daily).toContain('spent $0.000600 of $1.000000 · $0.999400 left');
    expect(daily).toContain('resets');
    const rows = page.locator('tbody tr');
    expect(await rows.count()).toBe(2);
    expect(await rows.first().textContent()).toContain('model-a');
    expect(await rows.first().textContent()).toContain('eve');
    expect(await rows.first().textContent()).toContain(STUB_PEER_ID.slice(0, 16));
    expect(await page.locator('.chart canvas').count()).toBe(1);
    await shot(page, 'key-overview');

    // The key is in no storage, no URL; the cookie is HttpOnly and SameSite=Strict.
    const stored = await page.evaluate<string>(
      'JSON.stringify([{ ...localStorage }, { ...sessionStorage }, location.href, document.cookie])',
    );
    expect(stored).not.toContain('svc_');
    const [cookie] = await page.context().cookies();
    expect(cookie).toMatchObject({ name: 'svc_console', httpOnly: true, sameSite: 'Strict' });
    expect(cookie!.value).not.toContain(secret.slice(4));

    // The Content-Security-Policy holds in the browser: an injected inline script does not run.
    const inlineRan = await page.evaluate<boolean>(
      "(() => { const s = document.createElement('script'); s.textContent = 'window.__ran = true'; document.body.append(s); return window.__ran === true; })()",
    );
    expect(inlineRan).toBe(false);

    // Read-only: every admin endpoint is 403, with or without a CSRF token.
    for (const path of [
      '/console/api/view/keys',
      '/console/api/view/logs',
      '/console/api/view/audit',
      '/console/api/logs.csv',
    ]) {
      expect((await pageFetch(page, path)).status).toBe(403);
    }
    const revoke = await pageFetch(page, `/console/api/keys/${key.id}/revoke`, {
      method: 'POST',
      csrf: true,
    });
    expect(revoke.status).toBe(403);
    expect((await h.store.getKey(key.id))!.revokedAt).toBeNull();
  });

  it('refuses a wrong key and signs out', async () => {
    const page = await newPage();
    await page.goto(`${h.gateway.url}/console/`);
    await page.fill('#key', `svc_${'x'.repeat(43)}`);
    await page.press('#key', 'Enter');
    await page.waitForSelector('.notice.error');
    expect(await page.textContent('.notice.error')).toContain('not known');
    await shot(page, 'sign-in');
    const { secret } = await h.key({ label: 'signout-key' });
    await page.fill('#key', secret);
    await page.press('#key', 'Enter');
    await page.waitForSelector('#sign-out');
    await page.click('#sign-out');
    await page.waitForSelector('#key');
    expect((await pageFetch(page, '/console/api/view/me')).status).toBe(401);
  });
});

describe('console: admin pages', () => {
  it('revoke from the row menu makes the key 401 at once and ends its console session', async () => {
    const { secret } = await keyWithRequests('to-revoke', 1);
    const holder = await newPage();
    await signInWithKey(holder, secret);
    const page = await newPage();
    await signInAsOperator(page);
    await openPage(page, 'keys');
    const row = rowOf(page, 'to-revoke');
    await row.locator('summary').click();
    await shot(page, 'keys-row-menu');
    await row.getByRole('button', { name: 'Revoke' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('tbody tr:has-text("to-revoke") .state.revoked');
    expect((await h.call('/v1/key', { secret })).status).toBe(401);
    expect((await chat(secret)).status).toBe(401);
    await holder.reload();
    await holder.waitForSelector('#key');
    await openPage(page, 'audit');
    await page.waitForSelector('text=key.revoke');
  });

  it('rotate shows the new secret once; the old one fails', async () => {
    const { key, secret: old } = await h.key({ label: 'to-rotate' });
    const page = await newPage();
    await signInAsOperator(page);
    await openPage(page, 'keys');
    const row = rowOf(page, 'to-rotate');
    await row.locator('summary').click();
    await row.getByRole('button', { name: 'Rotate secret' }).click();
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    const fresh = await page.inputValue('#secret');
    expect(fresh).toMatch(/^svc_[A-Za-z0-9_-]{43}$/);
    await shot(page, 'keys-secret-once');
    expect((await h.call('/v1/key', { secret: old })).status).toBe(401);
    const view = await h.call('/v1/key', { secret: fresh });
    expect(view.status).toBe(200);
    expect((await jsonOf(view)).data.id).toBe(key.id);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(fresh);
    await page.reload();
    await page.waitForSelector('tbody tr');
    expect(await page.content()).not.toContain(fresh);
  });

  it('editing a limit shows in GET /v1/key; creating a key shows its secret once', async () => {
    const { secret } = await h.key({ label: 'to-edit' });
    const page = await newPage();
    await signInAsOperator(page);
    await openPage(page, 'keys');
    const row = rowOf(page, 'to-edit');
    await row.locator('summary').click();
    await row.getByRole('button', { name: 'Edit' }).click();
    await page.fill('#f-limit-daily', '2.5');
    await page.fill('#f-label', 'edited');
    await shot(page, 'keys-edit');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('tbody tr:has-text("edited")');
    const view = (await jsonOf(await h.call('/v1/key', { secret }))).data;
    expect(view.label).toBe('edited');
    expect(view.limits.daily.limit_usd).toBe('2.500000');

    await page.click('#create-key');
    await page.fill('#f-label', 'made-in-console');
    await page.fill('#f-limit-weekly', '3');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    const created = await page.inputValue('#secret');
    const madeView = await jsonOf(await h.call('/v1/key', { secret: created }));
    expect(madeView.data.label).toBe('made-in-console');
    expect(madeView.data.limits.weekly.limit_usd).toBe('3.000000');
    await page.getByRole('button', { name: 'Done' }).click();
    await shot(page, 'keys');
  });

  it('refuses a mutation without the CSRF token or from another origin', async () => {
    const { key } = await h.key({ label: 'csrf-target' });
    const page = await newPage();
    await signInAsOperator(page);
    const refused = await pageFetch(page, `/console/api/keys/${key.id}/revoke`, { method: 'POST' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).error.code).toBe('csrf_invalid');
    const cookie = (await page.context().cookies())[0]!;
    const foreign = await fetch(`${h.gateway.url}/console/api/keys/${key.id}/revoke`, {
      method: 'POST',
      headers: {
        cookie: `svc_console=${cookie.value}`,
        origin: 'https://evil.example',
        'content-type': 'application/json',
      },
      body: '{}',
    });
    expect(foreign.status).toBe(403);
    expect((await h.store.getKey(key.id))!.revokedAt).toBeNull();
    const allowed = await pageFetch(page, `/console/api/keys/${key.id}/revoke`, {
      method: 'POST',
      csrf: true,
    });
    expect(allowed.status).toBe(200);
  });

  it('filters the request log and exports the same rows as CSV', async () => {
    await keyWithRequests('logs-a', 2, 'alice');
    await keyWithRequests('logs-b', 1, 'bob');
    const page = await newPage();
    await signInAsOperator(page);
    await openPage(page, 'logs');
    await page.fill('#filter-end_user', 'alice');
    await page.press('#filter-end_user', 'Enter');
    // Exact text: "12 requests" (the unfiltered page) also contains "2 requests".
    await page
      .locator('#log-count')
      .filter({ hasText: /^2 requests$/ })
      .waitFor();
    const texts = await page.locator('tbody tr').allTextContents();
    expect(texts).toHaveLength(2);
    for (const text of texts) expect(text).toContain('alice');
    await shot(page, 'logs');
    const href = await page.getAttribute('#export', 'href');
    expect(href).toContain('end_user=alice');
    const csv = await pageFetch(page, href!);
    const lines = csv.text.trim().split('\n');
    expect(lines[0]).toMatch(/^at,requestId,keyId/);
    expect(lines).toHaveLength(3);
    for (const line of lines.slice(1)) expect(line).toContain('alice');
  });

  it('shows the network and wallets from the buyer, with a deposit QR code', async () => {
    const page = await newPage();
    await signInAsOperator(page);
    await openPage(page, 'network');
    const offer = page.locator('tbody tr', { hasText: 'model-a' });
    expect(await offer.textContent()).toContain('in $2.00 · cached $0.50 · out $8.00');
    expect(await offer.textContent()).toContain('87');
    await shot(page, 'network');
    await openPage(page, 'wallets');
    const wallet = page.getByRole('article', { name: 'Wallet of Default' });
    const address = h.identities.loadDefault().record.address;
    expect(await wallet.textContent()).toContain(address);
    const qr = wallet.locator('img.qr');
    expect(await qr.getAttribute('alt')).toBe(`QR code of ${address}`);
    // The QR image decodes (a data: URL the CSP allows) to a real bitmap.
    await expect
      .poll(() => page.evaluate<number>('document.querySelector("img.qr").naturalWidth'))
      .toBeGreaterThan(100);
    expect(await page.locator('tbody tr', { hasText: 'open' }).textContent()).toContain(
      '$1.234567',
    );
    await shot(page, 'wallets');
  });

  it('adds a member, creates a workspace and disables a member from the Members page', async () => {
    const page = await newPage();
    await signInAsOperator(page);
    await openPage(page, 'members');
    await page.click('#create-workspace');
    await page.fill('#f-name', 'research');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('tbody tr:has-text("research")');
    expect((await h.store.findWorkspaceByName('research'))?.identity).toBe('research');
    await page.click('#add-member');
    await page.fill('#f-name', 'bea');
    await page.selectOption('#f-workspace', 'research');
    await page.fill('#f-keyQuota', '3');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('tbody tr:has-text("bea")');
    const bea = await h.store.findMemberByName('bea');
    expect(bea).toMatchObject({ keyQuota: 3, orgRole: 'none', disabled: false });
    await page.getByRole('button', { name: 'Edit bea' }).click();
    await page.check('input[name="disabled"]');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('tbody tr:has-text("bea"):has-text("disabled")');
    expect((await h.store.findMemberByName('bea'))?.disabled).toBe(true);
    await shot(page, 'members');
    await openPage(page, 'audit');
    await page.waitForSelector('text=member.add');
    expect(await page.locator('text=workspace.create').count()).toBe(1);
    await shot(page, 'audit');
  });

  it('edits a workspace policy and saves a preset on the Policies page', async () => {
    const page = await newPage();
    await signInAsOperator(page);
    await openPage(page, 'policies');
    await page.getByRole('button', { name: 'Edit policy of Default' }).click();
    await page.fill('#f-policy', '{"minTrustScore": 150}');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('dialog .notice.error');
    expect(await page.textContent('dialog .notice.error')).toContain(
      'invalid policy: minTrustScore',
    );
    await page.fill('#f-policy', '{"minTrustScore": 70, "allowedModels": ["model-a"]}');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('td pre:has-text("minTrustScore")');
    expect((await h.store.findWorkspaceByName('Default'))?.policy).toEqual({
      minTrustScore: 70,
      allowedModels: ['model-a'],
    });
    await page.click('#save-preset');
    await page.fill('#f-name', 'fast');
    await page.fill('#f-model', 'model-a');
    await page.fill('#f-policy', '{"sort": "price"}');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('code:has-text("@preset/fast")');
    expect(await h.store.getPreset('fast', '')).toMatchObject({
      model: 'model-a',
      policy: { sort: 'price' },
    });
    await shot(page, 'policies');
    await h.store.setWorkspacePolicy((await h.store.findWorkspaceByName('Default'))!.id, null);
  });

  it('works from the keyboard: row menu, dialog, Escape', async () => {
    await h.key({ label: 'keyboard-key' });
    const page = await newPage();
    await signInAsOperator(page);
    await openPage(page, 'keys');
    const row = rowOf(page, 'keyboard-key');
    await row.locator('summary').focus();
    await page.keyboard.press('Enter');
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe('Edit');
    await page.keyboard.press('Enter');
    await page.waitForSelector('dialog[open]');
    expect(await page.evaluate<string>('document.activeElement.id')).toBe('f-label');
    await page.keyboard.press('Escape');
    await page.waitForSelector('dialog', { state: 'detached' });
    // The skip link is the first stop and leads to the main content.
    await page.keyboard.press('Tab');
    expect(await page.evaluate<string>('document.activeElement.textContent')).toBe(
      'Skip to content',
    );
  });

  it('shows the usage page; requests refused before any seller are counted apart, not as a model', async () => {
    await keyWithRequests('usage-served', 1);
    const { key, secret } = await h.key({ label: 'usage-refused', limits: { total: 0n } });
    for (let i = 0; i < 2; i++) expect((await chat(secret)).status).toBe(402);
    await waitFor(async () => (await h.store.queryLogs({ keyId: key.id })).length === 2);
    const page = await newPage();
    await signInAsOperator(page);
    await openPage(page, 'usage');
    const byModel = page.locator('table', { hasText: 'Spend by model' });
    const models = await byModel.locator('tbody tr td:first-child').allTextContents();
    expect(models).toContain('model-a');
    expect(models).not.toContain('(none)');
    const byKey = await page
      .locator('table', { hasText: 'Spend by key' })
      .locator('tbody tr td:first-child')
      .allTextContents();
    expect(byKey).not.toContain(key.id);
    const refused = (await h.store.queryLogs({})).filter(
      (row) =>
        row.keyId !== null && row.status >= 400 && row.peerId === null && row.costMicro === 0n,
    ).length;
    expect(refused).toBeGreaterThanOrEqual(2);
    expect(await page.textContent('#not-served')).toBe(
      `${refused} requests were refused or failed before any seller answered ($0); they are not counted above.`,
    );
    await shot(page, 'usage');
  });
});

describe('console: member sign-in', () => {
  it('a member sees only their own keys, gets 403 on admin pages, and a link works once', async () => {
    const ws = await h.store.findWorkspaceByName('Default');
    const member = await h.store.createMember({
      id: 'mem_ann',
      name: 'ann',
      orgRole: 'none',
      keyQuota: 2,
      createdAt: Date.now(),
    });
    await h.store.addMembership(member.id, ws!.id, 'member');
    await h.key({ label: 'ann-key', member: 'ann' });
    const link = await createLoginLink(h.store, 'ann', Date.now());
    const page = await newPage();
    await page.goto(`${h.gateway.url}/console/login?token=${link.token}`);
    await page.waitForSelector('#sign-out');
    const labels = await page.locator('tbody tr td:first-child').allTextContents();
    expect(labels).toEqual(['ann-key']);
    expect((await pageFetch(page, '/console/api/view/audit')).status).toBe(403);
    await shot(page, 'member-keys');
    const again = await newPage();
    const reused = await again.goto(`${h.gateway.url}/console/login?token=${link.token}`);
    expect(reused?.status()).toBe(401);
  });
});
