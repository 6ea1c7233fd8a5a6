// Pages that change things: keys (row menu: edit, rotate, revoke; create) and members/workspaces.
import { post } from './api.js';
import { h, notice, openDialog, showSecret, table, usd, when } from './ui.js';

const PERIODS = ['daily', 'weekly', 'monthly', 'total'];

function field(label, name, value = '', attrs = {}) {
  const id = `f-${name}`;
  return h('label', { htmlFor: id }, label, h('input', { id, name, value: value ?? '', ...attrs }));
}

function limitFields(limits = {}) {
  return h(
    'fieldset',
    {},
    h('legend', {}, 'Limits in USD (empty = none)'),
    PERIODS.map((p) => field(p, `limit-${p}`, limits[p] ?? '', { inputMode: 'decimal' })),
  );
}

function limitsFrom(form) {
  return Object.fromEntries(
    PERIODS.map((p) => [p, form.elements[`limit-${p}`].value.trim() || null]),
  );
}

/** A form in a dialog; `submit(form)` runs the change, errors stay in the dialog. */
function formDialog(title, fields, submit) {
  const status = h('div', { 'aria-live': 'polite' });
  let dialog;
  const form = h(
    'form',
    {
      onsubmit: async (event) => {
        event.preventDefault();
        try {
          await submit(form);
          dialog.close();
        } catch (error) {
          status.replaceChildren(notice(error.message, 'error'));
        }
      },
    },
    fields,
    status,
    h(
      'div.actions',
      {},
      h('button', { type: 'submit' }, 'Save'),
      h('button', { type: 'button', onclick: () => dialog.close() }, 'Cancel'),
    ),
  );
  dialog = openDialog(title, form);
  form.querySelector('input')?.focus();
  return dialog;
}

function confirmDialog(title, text, action) {
  return formDialog(title, h('p', {}, text), action);
}

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

function editMember(member, reload) {
  formDialog(
    `Edit ${member.name}`,
    [
      field('Key quota (empty = unlimited)', 'keyQuota', member.keyQuota ?? ''),
      limitFields(member.limits),
      h(
        'label.check',
        {},
        h('input', { type: 'checkbox', name: 'disabled', checked: member.disabled }),
        ' Disabled',
      ),
    ],
    async (form) => {
      await post(`members/${member.id}/edit`, {
        keyQuota: form.elements.keyQuota.value.trim(),
        limits: limitsFrom(form),
        disabled: form.elements.disabled.checked,
      });
      reload();
    },
  );
}

function editWorkspace(ws, reload) {
  formDialog(`Budgets of ${ws.name}`, [limitFields(ws.limits)], async (form) => {
    await post(`workspaces/${ws.id}/edit`, { limits: limitsFrom(form) });
    reload();
  });
}

const limitsText = (limits) =>
  PERIODS.filter((p) => limits[p] !== null)
    .map((p) => `${p} ${usd(limits[p])}`)
    .join(', ') || 'none';

export function membersPage(data, reload, isAdmin) {
  return h(
    'section',
    {},
    h('h1', {}, 'Members and workspaces'),
    table(
      'Members',
      ['Name', 'Org role', 'Workspaces', 'Key quota', 'State', 'Budgets', ''],
      data.members.map((m) => [
        m.name,
        m.orgRole,
        m.workspaces.map((w) => `${w.name} (${w.role})`).join(', '),
        m.keyQuota === null ? 'unlimited' : String(m.keyQuota),
        m.disabled ? 'disabled' : 'active',
        limitsText(m.limits),
        isAdmin
          ? h('button', { type: 'button', onclick: () => editMember(m, reload) }, `Edit ${m.name}`)
          : '',
      ]),
      'none. Add one with `svc gateway member add`.',
    ),
    table(
      'Workspaces',
      ['Name', 'Pays from identity', 'Wallet', 'Budgets', 'Created', ''],
      data.workspaces.map((w) => [
        w.name,
        w.identity,
        w.address ? h('code', {}, w.address) : '—',
        limitsText(w.limits),
        when(w.createdAt),
        isAdmin
          ? h(
              'button',
              { type: 'button', onclick: () => editWorkspace(w, reload) },
              `Budgets of ${w.name}`,
            )
          : '',
      ]),
    ),
  );
}
