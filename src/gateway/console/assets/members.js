// Members and workspaces: add, disable, key quota, budgets; create a workspace.
import { post } from './api.js';
import { field, formDialog, limitFields, limitsFrom, PERIODS } from './forms.js';
import { h, table, usd, when } from './ui.js';

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

function select(label, name, options) {
  const id = `f-${name}`;
  return h(
    'label',
    { htmlFor: id },
    label,
    h(
      'select',
      { id, name },
      options.map((o) => h('option', { value: o }, o)),
    ),
  );
}

function addMember(data, reload) {
  formDialog(
    'Add member',
    [
      field('Name', 'name', '', { required: true }),
      select(
        'Workspace',
        'workspace',
        data.workspaces.map((w) => w.name),
      ),
      select('Workspace role', 'role', ['member', 'admin']),
      select('Organisation role', 'orgRole', ['none', 'admin', 'owner']),
      field('Key quota (empty = unlimited)', 'keyQuota', '', { inputMode: 'numeric' }),
    ],
    async (form) => {
      await post('members', {
        name: form.elements.name.value,
        workspace: form.elements.workspace.value,
        role: form.elements.role.value,
        orgRole: form.elements.orgRole.value,
        keyQuota: form.elements.keyQuota.value.trim(),
      });
      reload();
    },
  );
}

function createWorkspace(reload) {
  formDialog(
    'Create workspace',
    [
      field('Name', 'name', '', { required: true }),
      field('Pay from identity (empty = a new identity named after the workspace)', 'identity'),
    ],
    async (form) => {
      const identity = form.elements.identity.value.trim();
      await post('workspaces', {
        name: form.elements.name.value,
        ...(identity ? { identity } : { newIdentity: true }),
      });
      reload();
    },
  );
}

export function membersPage(data, reload, isAdmin) {
  return h(
    'section',
    {},
    h(
      'div.titlebar',
      {},
      h('h1', {}, 'Members and workspaces'),
      isAdmin
        ? h(
            'button',
            { type: 'button', id: 'add-member', onclick: () => addMember(data, reload) },
            'Add member',
          )
        : null,
      isAdmin
        ? h(
            'button',
            { type: 'button', id: 'create-workspace', onclick: () => createWorkspace(reload) },
            'Create workspace',
          )
        : null,
    ),
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
      'none yet.',
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
