/** Console sign-ins (key, operator, member) and the key actions that end sessions at once, in headless Chromium. */
import { describe, expect, it } from 'vitest';
import { jsonOf } from '../testing/harness.js';
import { STUB_PEER_ID } from '../testing/stubBuyer.js';
import { createLoginLink } from './index.js';
import { shot } from './testing/browser.js';
import { consoleHarness } from './testing/consoleHarness.js';

const con = consoleHarness();
const {
  newPage,
  chat,
  keyWithRequests,
  signInWithKey,
  signInAsOperator,
  pageFetch,
  openPage,
  rowOf,
} = con;

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
    expect((await con.h.store.getKey(key.id))!.revokedAt).toBeNull();
  });

  it('refuses a wrong key and signs out', async () => {
    const page = await newPage();
    await page.goto(`${con.h.gateway.url}/console/`);
    await page.fill('#key', `svc_${'x'.repeat(43)}`);
    await page.press('#key', 'Enter');
    await page.waitForSelector('.notice.error');
    expect(await page.textContent('.notice.error')).toContain('not known');
    await shot(page, 'sign-in');
    const { secret } = await con.h.key({ label: 'signout-key' });
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
    expect((await con.h.call('/v1/key', { secret })).status).toBe(401);
    expect((await chat(secret)).status).toBe(401);
    await holder.reload();
    await holder.waitForSelector('#key');
    await openPage(page, 'audit');
    await page.waitForSelector('text=key.revoke');
  });

  it('rotate shows the new secret once; the old one fails', async () => {
    const { key, secret: old } = await con.h.key({ label: 'to-rotate' });
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
    expect((await con.h.call('/v1/key', { secret: old })).status).toBe(401);
    const view = await con.h.call('/v1/key', { secret: fresh });
    expect(view.status).toBe(200);
    expect((await jsonOf(view)).data.id).toBe(key.id);
    await page.getByRole('button', { name: 'Done' }).click();
    expect(await page.content()).not.toContain(fresh);
    await page.reload();
    await page.waitForSelector('tbody tr');
    expect(await page.content()).not.toContain(fresh);
  });

  it('editing a limit shows in GET /v1/key; creating a key shows its secret once', async () => {
    const { secret } = await con.h.key({ label: 'to-edit' });
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
    const view = (await jsonOf(await con.h.call('/v1/key', { secret }))).data;
    expect(view.label).toBe('edited');
    expect(view.limits.daily.limit_usd).toBe('2.500000');

    await page.click('#create-key');
    await page.fill('#f-label', 'made-in-console');
    await page.fill('#f-limit-weekly', '3');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    const created = await page.inputValue('#secret');
    const madeView = await jsonOf(await con.h.call('/v1/key', { secret: created }));
    expect(madeView.data.label).toBe('made-in-console');
    expect(madeView.data.limits.weekly.limit_usd).toBe('3.000000');
    await page.getByRole('button', { name: 'Done' }).click();
    await shot(page, 'keys');
  });

  it('refuses a mutation without the CSRF token or from another origin', async () => {
    const { key } = await con.h.key({ label: 'csrf-target' });
    const page = await newPage();
    await signInAsOperator(page);
    const refused = await pageFetch(page, `/console/api/keys/${key.id}/revoke`, { method: 'POST' });
    expect(refused.status).toBe(403);
    expect(JSON.parse(refused.text).error.code).toBe('csrf_invalid');
    const cookie = (await page.context().cookies())[0]!;
    const foreign = await fetch(`${con.h.gateway.url}/console/api/keys/${key.id}/revoke`, {
      method: 'POST',
      headers: {
        cookie: `svc_console=${cookie.value}`,
        origin: 'https://evil.example',
        'content-type': 'application/json',
      },
      body: '{}',
    });
    expect(foreign.status).toBe(403);
    expect((await con.h.store.getKey(key.id))!.revokedAt).toBeNull();
    const allowed = await pageFetch(page, `/console/api/keys/${key.id}/revoke`, {
      method: 'POST',
      csrf: true,
    });
    expect(allowed.status).toBe(200);
  });
});

describe('console: member sign-in', () => {
  it('a member sees only their own keys, gets 403 on admin pages, and a link works once', async () => {
    const ws = await con.h.store.findWorkspaceByName('Default');
    const member = await con.h.store.createMember({
      id: 'mem_ann',
      name: 'ann',
      orgRole: 'none',
      keyQuota: 2,
      createdAt: Date.now(),
    });
    await con.h.store.addMembership(member.id, ws!.id, 'member');
    await con.h.key({ label: 'ann-key', member: 'ann' });
    const link = await createLoginLink(con.h.store, 'ann', Date.now());
    const page = await newPage();
    await page.goto(`${con.h.gateway.url}/console/login?token=${link.token}`);
    await page.waitForSelector('#sign-out');
    const labels = await page.locator('tbody tr td:first-child').allTextContents();
    expect(labels).toEqual(['ann-key']);
    expect((await pageFetch(page, '/console/api/view/audit')).status).toBe(403);
    await shot(page, 'member-keys');
    const again = await newPage();
    const reused = await again.goto(`${con.h.gateway.url}/console/login?token=${link.token}`);
    expect(reused?.status()).toBe(401);
  });
});
