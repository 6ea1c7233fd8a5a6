// The keys page: table with a row menu (edit, rotate, revoke) and key creation; secrets shown once.
import { post } from './api.js';
import { confirmDialog, field, formDialog, limitFields, limitsFrom, PERIODS } from './forms.js';
import { h, showSecret, table, usd, when } from './ui.js';

function editKey(key, reload) {
  formDialog(
    `Edit ${key.label}`,
    [
      field('Label', 'label', key.label, { required: true }),
      limitFields(key.adminLimits),
      field('Expires (YYYY-MM-DD, empty = never)', 'expiresAt', key.expiresAt?.slice(0, 10) ?? ''),
      field('Models (comma-separated, empty = all)', 'models', (key.models ?? []).join(',')),
      h(
        'label.check',
        {},
        h('input', {
          type: 'checkbox',
          name: 'topupEnabled',
          checked: key.topupEnabled,
          disabled: !key.ownIdentity,
        }),
        key.ownIdentity ? 'x402 top-ups' : 'x402 top-ups (only keys with their own wallet)',
      ),
    ],
    async (form) => {
      await post(`keys/${key.id}/edit`, {
        label: form.elements.label.value,
        limits: limitsFrom(form),
        expiresAt: form.elements.expiresAt.value.trim(),
        models: form.elements.models.value.trim(),
        ...(key.ownIdentity ? { topupEnabled: form.elements.topupEnabled.checked } : {}),
      });
      reload();
    },
  );
}

function rowMenu(key, reload) {
  const close = (details) => details.removeAttribute('open');
  const details = h('details.menu', {});
  const item = (label, run) =>
    h(
      'li',
      {},
      h(
        'button',
        {
          type: 'button',
          onclick: () => {
            close(details);
            run();
          },
        },
        label,
      ),
    );
  details.append(
    h('summary', { 'aria-label': `Actions for ${key.label}` }, 'Actions'),
    h(
      'ul',
      { role: 'list' },
      item('Edit', () => editKey(key, reload)),
      key.state === 'revoked'
        ? null
        : item('Rotate secret', () =>
            confirmDialog(
              'Rotate secret',
              `Issue a new secret for ${key.label}? The old one stops working at once.`,
              async () => {
                const { secret } = await post(`keys/${key.id}/rotate`);
                showSecret(`New secret for ${key.label}`, secret);
                reload();
              },
            ),
          ),
      key.state === 'revoked'
        ? null
        : item('Revoke', () =>
            confirmDialog(
              'Revoke key',
              `Revoke ${key.label}? Requests with it get 401 from now on.`,
              async () => {
                await post(`keys/${key.id}/revoke`);
                reload();
              },
            ),
          ),
    ),
  );
  return details;
}

function createKey(data, reload) {
  formDialog(
    'Create key',
    [
      field('Label', 'label', '', { required: true }),
      data.workspaces.length > 1
        ? h(
            'label',
            {},
            'Workspace',
            h(
              'select',
              { name: 'workspace' },
              data.workspaces.map((w) => h('option', { value: w }, w)),
            ),
          )
        : null,
      data.members.length > 0
        ? h(
            'label',
            {},
            'Member',
            h(
              'select',
              { name: 'member' },
              data.keyQuota === null ? h('option', { value: '' }, '(none)') : null,
              data.members.map((m) => h('option', { value: m }, m)),
            ),
          )
        : null,
      limitFields(),
      field('Expires (YYYY-MM-DD, empty = never)', 'expiresAt'),
      field('Models (comma-separated, empty = all)', 'models'),
    ],
    async (form) => {
      const created = await post('keys', {
        label: form.elements.label.value,
        workspace: form.elements.workspace?.value,
        member: form.elements.member?.value || undefined,
        limits: limitsFrom(form),
        expiresAt: form.elements.expiresAt.value.trim() || undefined,
        models: form.elements.models.value.trim() || undefined,
      });
      showSecret(`Secret of ${created.label}`, created.secret);
      reload();
    },
  );
}

/** Spent / limit per period, one line each (a period without a limit shows spend only). */
function spendLines(key) {
  return h(
    'ul.periods',
    {},
    PERIODS.map((p) =>
      h(
        'li',
        {},
        h('span.period', {}, p),
        ' ',
        key.limits[p] === null ? usd(key.spent[p]) : `${usd(key.spent[p])} / ${usd(key.limits[p])}`,
      ),
    ),
  );
}

export function keysPage(data, reload) {
  return h(
    'section',
    {},
    h(
      'div.titlebar',
      {},
      h('h1', {}, 'API keys'),
      h(
        'button',
        { type: 'button', id: 'create-key', onclick: () => createKey(data, reload) },
        'Create key',
      ),
    ),
    data.keyQuota === null ? null : h('p.meta', {}, `Your key quota: ${data.keyQuota}`),
    table(
      'Keys',
      ['Label', 'Id', 'State', 'Workspace', 'Member', 'Spent / limit', 'Requests', 'Expires', ''],
      data.keys.map((k) => [
        k.label,
        h('code', {}, k.id),
        h(`span.state.${k.state}`, {}, k.state),
        k.workspace,
        k.member,
        spendLines(k),
        String(k.requests),
        when(k.expiresAt),
        rowMenu(k, reload),
      ]),
      'no keys yet.',
    ),
  );
}
