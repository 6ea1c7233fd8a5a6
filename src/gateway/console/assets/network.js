// The network (sellers, offers, prices, reputation) and wallets (deposit address with QR, credits).
import qrcode from './qrcode.js';
import { count, h, notice, table, usd, when } from './ui.js';

const short = (text, n = 16) =>
  text ? h('code.ellipsis', { title: text }, text.length > n ? `${text.slice(0, n)}…` : text) : '—';

function priceText(prices) {
  if (!prices) return '—';
  const parts = [];
  const money = (n) => `$${Number(n).toFixed(2)}`;
  if (prices.inputUsdPerMillion !== undefined) parts.push(`in ${money(prices.inputUsdPerMillion)}`);
  if (prices.cachedInputUsdPerMillion !== undefined)
    parts.push(`cached ${money(prices.cachedInputUsdPerMillion)}`);
  if (prices.outputUsdPerMillion !== undefined)
    parts.push(`out ${money(prices.outputUsdPerMillion)}`);
  if (parts.length === 0) {
    for (const [name, value] of Object.entries(prices)) {
      if (typeof value === 'string' || typeof value === 'number') parts.push(`${name} ${value}`);
    }
  }
  return parts.join(' · ') || '—';
}

export function networkPage(data) {
  const status = data.status;
  const offers = data.peers.flatMap((peer) =>
    (peer.offers ?? []).map((offer) => [
      offer.model,
      short(peer.peerId),
      peer.region ?? '—',
      priceText(offer.prices),
      peer.reputationScore === null || peer.reputationScore === undefined
        ? '—'
        : String(peer.reputationScore),
      peer.reachable ? 'reachable' : 'unreachable',
      peer.coolingDown ? 'cooling down' : `${count(peer.recentFailures)} recent failures`,
    ]),
  );
  return h(
    'section',
    {},
    h('h1', {}, 'Network'),
    data.problem ? notice(`Network data unavailable: ${data.problem}`, 'error') : null,
    status
      ? h(
          'dl.cards',
          {},
          card('Reachability', status.reachability),
          card('Sellers seen', count(status.peerCount)),
          card('Reachable sellers', count(status.reachablePeerCount)),
          card(
            'Last refresh',
            when(status.lastRefreshAt ? new Date(status.lastRefreshAt).toISOString() : null),
          ),
        )
      : null,
    table(
      'Catalog: offers by seller',
      [
        'Model',
        'Seller',
        'Region',
        'Price (USD per million tokens)',
        'Reputation',
        'Reachable',
        'Health',
      ],
      offers,
      'no sellers seen yet.',
    ),
  );
}

function card(label, value) {
  return h('div.card', {}, h('dt', {}, label), h('dd', {}, value));
}

function qrOf(address) {
  const qr = qrcode(0, 'M');
  qr.addData(address);
  qr.make();
  return h('img.qr', {
    src: qr.createDataURL(4, 8),
    alt: `QR code of ${address}`,
    width: 160,
    height: 160,
  });
}

/** "1234567" micro-USD -> "1.234567" (exact, no float). */
function micro(text) {
  const digits = String(text).padStart(7, '0');
  return `${digits.slice(0, -6)}.${digits.slice(-6)}`;
}

export function walletsPage(data) {
  return h(
    'section',
    {},
    h('h1', {}, 'Wallets'),
    h(
      'p.meta',
      {},
      'Each workspace pays from one wallet. Deposit USDC to its address (on the local chain: ',
      h('code', {}, 'svc buyer deposit'),
      ').',
    ),
    h(
      'div.wallets',
      {},
      data.wallets.map((w) =>
        h(
          'article.wallet',
          { 'aria-label': `Wallet of ${w.workspace}` },
          h('h2', {}, w.workspace),
          w.address ? qrOf(w.address) : null,
          h(
            'dl',
            {},
            h('dt', {}, 'Deposit address'),
            h('dd', {}, w.address ? h('code', {}, w.address) : 'not on this host'),
            h('dt', {}, 'Identity'),
            h('dd', {}, w.identity),
            h('dt', {}, 'Keys'),
            h('dd', {}, String(w.keys)),
            h('dt', {}, 'Top-up credits'),
            h('dd', {}, usd(w.toppedUpUsd)),
          ),
        ),
      ),
    ),
    table(
      'Key credits (x402 top-ups)',
      ['Key', 'Label', 'Topped up'],
      data.credits.map((c) => [h('code', {}, c.keyId), c.label, usd(c.toppedUpUsd)]),
      'no top-ups yet.',
    ),
    data.problem ? notice(`Channels unavailable: ${data.problem}`, 'error') : null,
    table(
      'Payment channels',
      ['Channel', 'Identity', 'Seller', 'Status', 'Signed', 'Requests'],
      data.channels.map((c) => [
        short(c.channelId),
        c.identity,
        short(c.seller),
        c.status,
        c.signedMicro === undefined ? '—' : usd(micro(c.signedMicro)),
        count(c.requests),
      ]),
      'no open channels.',
    ),
  );
}
