// Routing policies (workspace, member) and presets; admins edit them as the JSON the store keeps.
import { post } from './api.js';
import { field, formDialog } from './forms.js';
import { h, table } from './ui.js';

const json = (value) => (value ? h('pre', {}, JSON.stringify(value, null, 2)) : '—');

const EXAMPLE = '{"minTrustScore": 70, "maxPricing": {"outputUsdPerMillion": 15}}';

function policyArea(value) {
  return h(
    'label',
    { htmlFor: 'f-policy' },
    `Policy as JSON, e.g. ${EXAMPLE} (empty = none)`,
    h('textarea', {
      id: 'f-policy',
      name: 'policy',
      rows: 8,
      spellcheck: false,
      value: value ? JSON.stringify(value, null, 2) : '',
    }),
  );
}

function parsePolicy(text) {
  if (!text.trim()) return null;
  try {
    return JSON.parse(text);
  } catch {
    throw new Error('The policy is not valid JSON.');
  }
}

function editPolicy(scope, name, policy, reload) {
  formDialog(`Policy of ${scope} ${name}`, [policyArea(policy)], async (form) => {
    await post('policies/set', { scope, name, policy: parsePolicy(form.elements.policy.value) });
    reload();
  });
}

function savePreset(reload) {
  formDialog(
    'Save preset',
    [
      field('Name (used as @preset/<name>)', 'name', '', { required: true }),
      field('Workspace (empty = the organisation)', 'workspace'),
      field('Model it routes to (optional)', 'model'),
      policyArea(null),
    ],
    async (form) => {
      await post('presets/save', {
        name: form.elements.name.value.trim(),
        workspace: form.elements.workspace.value.trim() || undefined,
        model: form.elements.model.value.trim() || undefined,
        policy: parsePolicy(form.elements.policy.value) ?? {},
      });
      reload();
    },
  );
}

const button = (label, onclick) => h('button', { type: 'button', onclick }, label);

export function policiesPage(data, reload, isAdmin) {
  const editButton = (scope, name, policy) =>
    isAdmin ? button(`Edit policy of ${name}`, () => editPolicy(scope, name, policy, reload)) : '';
  return h(
    'section',
    {},
    h(
      'div.titlebar',
      {},
      h('h1', {}, 'Routing policies and presets'),
      isAdmin
        ? h(
            'button',
            { type: 'button', id: 'save-preset', onclick: () => savePreset(reload) },
            'Save preset',
          )
        : null,
    ),
    table(
      'Presets',
      ['Name', 'Owner', 'Model', 'Policy', ''],
      data.presets.map((p) => [
        h('code', {}, `@preset/${p.name}`),
        p.owner,
        p.model,
        json(p.policy),
        isAdmin
          ? button(`Remove ${p.name}`, async () => {
              await post('presets/remove', {
                name: p.name,
                workspace: p.owner === 'organisation' ? undefined : p.owner,
              });
              reload();
            })
          : '',
      ]),
      'none yet.',
    ),
    table(
      'Workspace policies',
      ['Workspace', 'Policy', ''],
      data.workspaces.map((w) => [
        w.name,
        json(w.policy),
        editButton('workspace', w.name, w.policy),
      ]),
    ),
    table(
      'Member policies',
      ['Member', 'Policy', ''],
      data.members.map((m) => [m.name, json(m.policy), editButton('member', m.name, m.policy)]),
    ),
  );
}
