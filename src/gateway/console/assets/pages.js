// Read-only pages: sign-in, the key holder's view, logs, usage and the audit log.
import { signIn } from './api.js';
import { count, dailyChart, h, limitBar, notice, table, usd, when } from './ui.js';

const PERIODS = ['daily', 'weekly', 'monthly', 'total'];

/** The sign-in form: the key goes to the server once and the field is cleared. */
export function signInPage(onSignedIn, message) {
  const input = h('input', {
    id: 'key',
    type: 'password',
    name: 'key',
    autocomplete: 'off',
    spellcheck: false,
    required: true,
    placeholder: 'svc_…',
  });
  const status = h('div', { 'aria-live': 'polite' }, message ? notice(message, 'error') : null);
  const form = h(
    'form.signin',
    {
      onsubmit: async (event) => {
        event.preventDefault();
        const key = input.value;
        input.value = '';
        try {
          await signIn(key);
          onSignedIn();
        } catch (error) {
          status.replaceChildren(notice(error.message, 'error'));
          input.focus();
        }
      },
    },
    h('h1', {}, 'Sign in'),
    h('label', { htmlFor: 'key' }, 'API key'),
    input,
    h('button', { type: 'submit' }, 'Show my usage'),
    status,
    h(
      'p.hint',
      {},
      'Pasting a key shows its usage read-only. Members and admins sign in with a link from ',
      h('code', {}, 'svc gateway console login <member>'),
      '.',
    ),
  );
  requestAnimationFrame(() => input.focus());
  return form;
}

function requestsTable(caption, logs, withKey = false) {
  return table(
    caption,
    [
      'Time',
      ...(withKey ? ['Key'] : []),
      'Model',
      'Seller',
      'Cost',
      'Status',
      'Tokens in/cached/out',
      'End user',
    ],
    logs.map((r) => [
      when(r.at),
      ...(withKey ? [r.keyId] : []),
      r.model,
      r.seller ? h('code', { title: r.seller }, r.seller.slice(0, 16)) : '—',
      usd(r.costUsd),
      r.errorCode ? `${r.status} ${r.errorCode}` : String(r.status),
      `${count(r.inputTokens)} / ${count(r.cachedInputTokens)} / ${count(r.outputTokens)}`,
      r.endUser,
    ]),
    'no requests yet.',
  );
}

/** The key holder's page: the GET /v1/key numbers with bars, daily spend, top-ups, requests. */
export function mePage(data) {
  const { key, resetsAt } = data;
  const usage = key.usage;
  return h(
    'section',
    {},
    h('h1', {}, key.label),
    h(
      'p.meta',
      {},
      h('code', {}, key.id),
      ` · ${data.state}`,
      ` · created ${when(key.created_at)}`,
      key.expires_at ? ` · expires ${when(key.expires_at)}` : '',
    ),
    h(
      'dl.cards',
      {},
      card('Requests', count(usage.requests), 'requests'),
      card('Spent', usd(usage.spent_usd), 'spent'),
      card('Topped up', usd(usage.topped_up_usd), 'topped-up'),
      card(
        'Tokens in / cached / out',
        `${count(usage.input_tokens)} / ${count(usage.cached_input_tokens)} / ${count(usage.output_tokens)}`,
        'tokens',
      ),
    ),
    h(
      'section.limits',
      { 'aria-labelledby': 'limits-h' },
      h('h2', { id: 'limits-h' }, 'Limits'),
      PERIODS.map((p) => {
        const l = key.limits[p];
        return limitBar(p, l.limit_usd, l.spent_usd, l.remaining_usd, resetsAt[p]);
      }),
    ),
    dailyChart('Spend per day (last 30 days, USD)', data.spendByDay),
    table(
      'Top-ups',
      ['Time', 'Amount', 'State', 'Transaction'],
      data.topups.map((t) => [when(t.at), usd(t.amountUsd), t.state, t.transaction]),
      key.topup_enabled ? 'none yet.' : 'top-ups are off for this key.',
    ),
    requestsTable('Recent requests', data.logs),
  );
}

function card(label, value, id) {
  return h('div.card', { id: `card-${id}` }, h('dt', {}, label), h('dd', {}, value));
}

const LOG_FILTERS = [
  ['key', 'Key id'],
  ['member', 'Member'],
  ['model', 'Model'],
  ['seller', 'Seller peer id'],
  ['end_user', 'End user'],
  ['since', 'From (ISO time)'],
  ['until', 'Until (ISO time)'],
];

/** Request log with filters (kept in the page address) and a CSV export of the same filter. */
export function logsPage(data, query, go) {
  const params = new URLSearchParams(query);
  const form = h(
    'form.filters',
    {
      onsubmit: (event) => {
        event.preventDefault();
        const next = new URLSearchParams();
        for (const [name] of LOG_FILTERS) {
          const value = form.elements[name].value.trim();
          if (value) next.set(name, value);
        }
        go('logs', next.toString());
      },
    },
    LOG_FILTERS.map(([name, label]) =>
      h(
        'label',
        {},
        label,
        h('input', { name, id: `filter-${name}`, value: params.get(name) ?? '' }),
      ),
    ),
    h('button', { type: 'submit' }, 'Filter'),
    h(
      'a.button',
      { href: `/console/api/logs.csv?${params}`, download: 'requests.csv', id: 'export' },
      'Export CSV',
    ),
  );
  return h(
    'section',
    {},
    h('h1', {}, 'Request log'),
    form,
    h('p.meta', { id: 'log-count' }, `${data.logs.length} requests`),
    requestsTable('Requests', data.logs, true),
  );
}

function dimensionChart(title, rows) {
  const max = Math.max(1e-9, ...rows.map((r) => Number(r.costUsd)));
  return table(
    title,
    ['', 'Cost', 'Share', 'Requests', 'Tokens in/out'],
    rows.map((r) => [
      r.group ? h('span.ellipsis', { title: r.group }, r.group) : '(none)',
      usd(r.costUsd),
      h('meter', { min: 0, max, value: Number(r.costUsd), 'aria-label': `${r.group} cost` }),
      count(r.requests),
      `${count(r.inputTokens)} / ${count(r.outputTokens)}`,
    ]),
    'no requests yet.',
  );
}

export function usagePage(data) {
  return h(
    'section',
    {},
    h('h1', {}, 'Usage'),
    data.spendByDay ? dailyChart('Spend per day (last 30 days, USD)', data.spendByDay) : null,
    data.notServed > 0
      ? h(
          'p.meta',
          { id: 'not-served' },
          `${count(data.notServed)} requests were refused or failed before any seller answered ($0); they are not counted above.`,
        )
      : null,
    h(
      'div.grid',
      {},
      dimensionChart('Spend by model', data.by.model),
      dimensionChart('Spend by seller', data.by.seller),
      dimensionChart('Spend by end user', data.by.end_user),
      dimensionChart('Spend by key', data.by.key),
    ),
  );
}

export function auditPage(data) {
  return h(
    'section',
    {},
    h('h1', {}, 'Audit log'),
    table(
      'Admin changes',
      ['Time', 'Who', 'Action', 'Target', 'Details'],
      data.entries.map((e) => [
        when(e.at),
        e.actor,
        e.action,
        h('code', {}, e.target),
        e.detail === '{}' ? '—' : e.detail,
      ]),
      'no changes yet.',
    ),
  );
}
