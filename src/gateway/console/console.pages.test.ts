/** The console's admin pages in headless Chromium: request log and CSV, network and wallets, members, workspaces and policies, keyboard use, usage. */
import { describe, expect, it } from 'vitest';
import { waitFor } from '../../testing/index.js';
import { shot } from './testing/browser.js';
import { consoleHarness } from './testing/consoleHarness.js';

const con = consoleHarness();
const { newPage, chat, keyWithRequests, signInAsOperator, pageFetch, openPage, rowOf } = con;

describe('console: admin pages', () => {
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
    const address = con.h.identities.loadDefault().record.address;
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
    expect((await con.h.store.findWorkspaceByName('research'))?.identity).toBe('research');
    await page.click('#add-member');
    await page.fill('#f-name', 'bea');
    await page.selectOption('#f-workspace', 'research');
    await page.fill('#f-keyQuota', '3');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('tbody tr:has-text("bea")');
    const bea = await con.h.store.findMemberByName('bea');
    expect(bea).toMatchObject({ keyQuota: 3, orgRole: 'none', disabled: false });
    await page.getByRole('button', { name: 'Edit bea' }).click();
    await page.check('input[name="disabled"]');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('tbody tr:has-text("bea"):has-text("disabled")');
    expect((await con.h.store.findMemberByName('bea'))?.disabled).toBe(true);
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
    expect((await con.h.store.findWorkspaceByName('Default'))?.policy).toEqual({
      minTrustScore: 70,
      allowedModels: ['model-a'],
    });
    await page.click('#save-preset');
    await page.fill('#f-name', 'fast');
    await page.fill('#f-model', 'model-a');
    await page.fill('#f-policy', '{"sort": "price"}');
    await page.getByRole('dialog').getByRole('button', { name: 'Save' }).click();
    await page.waitForSelector('code:has-text("@preset/fast")');
    expect(await con.h.store.getPreset('fast', '')).toMatchObject({
      model: 'model-a',
      policy: { sort: 'price' },
    });
    await shot(page, 'policies');
    await con.h.store.setWorkspacePolicy(
      (await con.h.store.findWorkspaceByName('Default'))!.id,
      null,
    );
  });

  it('works from the keyboard: row menu, dialog, Escape', async () => {
    await con.h.key({ label: 'keyboard-key' });
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
    const { key, secret } = await con.h.key({ label: 'usage-refused', limits: { total: 0n } });
    for (let i = 0; i < 2; i++) expect((await chat(secret)).status).toBe(402);
    await waitFor(async () => (await con.h.store.queryLogs({ keyId: key.id })).length === 2);
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
    const refused = (await con.h.store.queryLogs({})).filter(
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
