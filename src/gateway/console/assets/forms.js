// Form pieces shared by the admin pages: labelled fields, limit inputs, a dialog around a form.
import { h, notice, openDialog } from './ui.js';

export const PERIODS = ['daily', 'weekly', 'monthly', 'total'];

export function field(label, name, value = '', attrs = {}) {
  const id = `f-${name}`;
  return h('label', { htmlFor: id }, label, h('input', { id, name, value: value ?? '', ...attrs }));
}

export function limitFields(limits = {}) {
  return h(
    'fieldset',
    {},
    h('legend', {}, 'Limits in USD (empty = none)'),
    PERIODS.map((p) => field(p, `limit-${p}`, limits[p] ?? '', { inputMode: 'decimal' })),
  );
}

export function limitsFrom(form) {
  return Object.fromEntries(
    PERIODS.map((p) => [p, form.elements[`limit-${p}`].value.trim() || null]),
  );
}

/** A form in a dialog; `submit(form)` runs the change, errors stay in the dialog. */
export function formDialog(title, fields, submit) {
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

export function confirmDialog(title, text, action) {
  return formDialog(title, h('p', {}, text), action);
}
