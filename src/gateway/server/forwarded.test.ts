import type { IncomingMessage } from 'node:http';
import { afterEach, describe, expect, it } from 'vitest';
import { waitFor } from '../../testing/index.js';
import { type Harness, jsonOf, startHarness } from '../testing/harness.js';
import { ForwardedTrust, TUNNEL_TOKEN_HEADER } from './forwarded.js';

const fakeRequest = (remoteAddress: string, headers: Record<string, string>) =>
  ({ socket: { remoteAddress }, headers }) as unknown as IncomingMessage;

const forwarded = {
  'x-forwarded-for': '198.51.100.1, 203.0.113.7, 10.0.0.2',
  'x-forwarded-proto': 'https',
  'x-forwarded-host': 'api.example.com',
  'x-forwarded-prefix': '/abc',
  host: '127.0.0.1:8379',
};

describe('ForwardedTrust', () => {
  it('ignores forwarded headers from an untrusted peer', () => {
    const trust = new ForwardedTrust(['10.0.0.0/8']);
    expect(trust.origin(fakeRequest('192.0.2.5', forwarded))).toEqual({
      address: '192.0.2.5',
      proto: 'http',
      host: '127.0.0.1:8379',
      prefix: '',
    });
  });

  it('believes a trusted proxy and takes the first untrusted hop from the right', () => {
    const trust = new ForwardedTrust(['10.0.0.0/8', '::1']);
    expect(trust.origin(fakeRequest('::ffff:10.0.0.1', forwarded))).toEqual({
      address: '203.0.113.7',
      proto: 'https',
      host: 'api.example.com',
      prefix: '/abc',
    });
  });

  it('believes the tunnel only with the exact token', () => {
    const trust = new ForwardedTrust([], 'secret-token');
    const via = (token: string) =>
      trust.origin(fakeRequest('127.0.0.1', { ...forwarded, [TUNNEL_TOKEN_HEADER]: token }));
    expect(via('secret-token').address).toBe('10.0.0.2');
    expect(via('secret-tokem').address).toBe('127.0.0.1');
  });

  it('refuses an entry that is not an IP or CIDR', () => {
    expect(() => new ForwardedTrust(['example.com'])).toThrow(/not an IP or CIDR/);
    expect(() => new ForwardedTrust(['10.0.0.0/33'])).toThrow(/prefix length/);
  });
});

describe('gateway.trustedProxies', () => {
  let h: Harness | undefined;
  afterEach(async () => {
    await h?.stop();
    h = undefined;
  });

  const failFrom = (target: Harness, clientAddress: string) =>
    target.call('/v1/key', {
      secret: `svc_${'A'.repeat(43)}`,
      headers: { 'x-forwarded-for': clientAddress },
    });

  it('without it, a spoofed X-Forwarded-For neither dodges the throttle nor reaches the log', async () => {
    h = await startHarness({ gateway: { authFailuresPerMinute: 2 } });
    expect((await failFrom(h, '203.0.113.1')).status).toBe(401);
    expect((await failFrom(h, '203.0.113.2')).status).toBe(401);
    expect((await failFrom(h, '203.0.113.3')).status).toBe(429);
    const target = h;
    const rows = await waitFor(async () => {
      const all = await target.store.queryLogs({});
      return all.length === 3 && all;
    });
    expect(new Set(rows.map((row) => row.clientAddress))).toEqual(new Set(['127.0.0.1']));
  });

  it('with it, the throttle and the log count the forwarded client', async () => {
    h = await startHarness({
      gateway: { authFailuresPerMinute: 2, trustedProxies: ['127.0.0.1'] },
    });
    expect((await failFrom(h, '203.0.113.1')).status).toBe(401);
    expect((await failFrom(h, '203.0.113.1')).status).toBe(401);
    expect((await failFrom(h, '203.0.113.1')).status).toBe(429);
    const other = await failFrom(h, '203.0.113.2');
    expect(other.status).toBe(401);
    expect((await jsonOf(other)).error.code).toBe('unauthorized');
    const target = h;
    const rows = await waitFor(async () => {
      const all = await target.store.queryLogs({});
      return all.length === 4 && all;
    });
    expect(rows.filter((row) => row.clientAddress === '203.0.113.1')).toHaveLength(3);
    expect(rows.filter((row) => row.clientAddress === '203.0.113.2')).toHaveLength(1);
  });
});
