import { afterAll, beforeAll, describe, expect, it } from 'vitest';
import { type Harness, jsonOf, startHarness } from '../../testing/harness.js';
import { createLoginLink } from '../index.js';
import { CONTENT_SECURITY_POLICY } from './http.js';

const T0 = Date.UTC(2026, 2, 18, 12, 0, 0);
let h: Harness;
beforeAll(async () => {
  h = await startHarness({ now: T0, gateway: { authFailuresPerMinute: 3 } });
});
afterAll(() => h.stop());

const signIn = (key: string, headers: Record<string, string> = {}) =>
  h.call('/console/api/sign-in', {
    method: 'POST',
    body: JSON.stringify({ key }),
    headers: { 'x-forwarded-for': 'ignored', ...headers },
  });
const cookieOf = (response: Response) => response.headers.get('set-cookie')!.split(';')[0]!;

describe('console HTTP', () => {
  it('serves the page and its assets with a strict CSP and no secret in the HTML', async () => {
    const page = await h.call('/console/');
    expect(page.status).toBe(200);
    expect(page.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    expect(CONTENT_SECURITY_POLICY).toContain("script-src 'self'");
    expect(CONTENT_SECURITY_POLICY).not.toContain('unsafe');
    expect(page.headers.get('x-frame-options')).toBe('DENY');
    const html = await page.text();
    expect(html).not.toMatch(/svc_[A-Za-z0-9_-]{43}|csrf/i);
    expect(html).not.toMatch(/https?:\/\//);
    for (const asset of ['app.js', 'uplot.js', 'app.css']) {
      const response = await h.call(`/console/assets/${asset}`);
      expect(response.status).toBe(200);
      expect(response.headers.get('content-security-policy')).toBe(CONTENT_SECURITY_POLICY);
    }
    expect((await h.call('/console/assets/../../package.json')).status).toBe(404);
    expect((await h.call('/console', { redirect: 'manual' })).headers.get('location')).toBe(
      '/console/',
    );
  });

  it('sets a Secure cookie over HTTPS and ends a key session when the key expires', async () => {
    const { key, secret } = await h.key({ label: 'expiring', expiresAt: T0 + 60_000 });
    const response = await signIn(secret, { 'x-forwarded-proto': 'https' });
    expect(response.status).toBe(200);
    expect(response.headers.get('set-cookie')).toMatch(/HttpOnly; SameSite=Strict; .*Secure$/);
    const cookie = cookieOf(response);
    const me = await h.call('/console/api/view/me', { headers: { cookie } });
    expect((await jsonOf(me)).data.key.id).toBe(key.id);
    h.clock.now = T0 + 60_000;
    const after = await h.call('/console/api/view/me', { headers: { cookie } });
    expect(after.status).toBe(401);
    expect((await jsonOf(after)).error.code).toBe('console_sign_in_required');
    h.clock.now = T0;
    expect((await h.call('/console/api/view/me', { headers: { cookie } })).status).toBe(401);
  });

  it('signs in through a link once; an expired link fails', async () => {
    const link = await createLoginLink(h.store, null, T0);
    const first = await h.call(`/console/login?token=${link.token}`);
    expect(first.status).toBe(200);
    const cookie = cookieOf(first);
    const keys = await jsonOf(await h.call('/console/api/view/keys', { headers: { cookie } }));
    expect(keys.session).toMatchObject({ kind: 'admin', name: 'operator' });
    expect((await h.call(`/console/login?token=${link.token}`)).status).toBe(401);
    const late = await createLoginLink(h.store, null, T0 - 10 * 60_000);
    expect((await h.call(`/console/login?token=${late.token}`)).status).toBe(401);
    const out = await h.call('/console/api/sign-out', {
      method: 'POST',
      headers: { cookie, 'x-csrf-token': keys.session.csrfToken },
    });
    expect(out.headers.get('set-cookie')).toContain('Max-Age=0');
    expect((await h.call('/console/api/view/keys', { headers: { cookie } })).status).toBe(401);
  });

  it('rate-limits failed sign-ins with 429 and Retry-After', async () => {
    const wrong = `svc_${'y'.repeat(43)}`;
    h.clock.now = T0 + 120_000; // a fresh throttle window (the link test failed twice)
    for (let i = 0; i < 3; i++) expect((await signIn(wrong)).status).toBe(401);
    const limited = await signIn(wrong);
    expect(limited.status).toBe(429);
    expect(Number(limited.headers.get('retry-after'))).toBeGreaterThan(0);
    h.clock.now = T0 + 181_000;
    expect((await signIn(wrong)).status).toBe(401);
    h.clock.now = T0;
  });
});
