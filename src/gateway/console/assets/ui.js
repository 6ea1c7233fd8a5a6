// Small DOM helpers: elements are built with textContent only (no HTML strings), so nothing injects.

/** h('tag.class', {attrs}, ...children) */
export function h(spec, attrs = {}, ...children) {
  const [tag, ...classes] = spec.split('.');
  const node = document.createElement(tag || 'div');
  if (classes.length) node.className = classes.join(' ');
  for (const [name, value] of Object.entries(attrs ?? {})) {
    if (value === undefined || value === null || value === false) continue;
    if (name.startsWith('on')) node.addEventListener(name.slice(2), value);
    else if (name in node && name !== 'list' && name !== 'form') node[name] = value;
    else node.setAttribute(name, value === true ? '' : String(value));
  }
  for (const child of children.flat()) {
    if (child === null || child === undefined || child === false) continue;
    node.append(child instanceof Node ? child : document.createTextNode(String(child)));
  }
  return node;
}

/** A table with a caption, header cells and rows of cells (strings or nodes). */
export function table(caption, headers, rows, empty = 'Nothing yet.') {
  if (rows.length === 0) return h('p.empty', {}, `${caption}: ${empty}`);
  return h(
    'div.scroll',
    {},
    h(
      'table',
      {},
      h('caption', {}, caption),
      h(
        'thead',
        {},
        h(
          'tr',
          {},
          headers.map((label) => h('th', { scope: 'col' }, label)),
        ),
      ),
      h(
        'tbody',
        {},
        rows.map((cells) =>
          h(
            'tr',
            {},
            cells.map((cell) => h('td', {}, cell ?? '—')),
          ),
        ),
      ),
    ),
  );
}

export const usd = (text) =>
  text === null || text === undefined ? '—' : `$${Number(text).toFixed(6)}`;
export const when = (iso) => (iso ? iso.replace('T', ' ').replace(/\.\d+Z$/, ' UTC') : '—');
export const count = (n) => Number(n ?? 0).toLocaleString('en-US');

/** Spent against a limit: a <meter> plus the numbers in words. */
export function limitBar(period, limit, spent, remaining, resetsAt) {
  const meter =
    limit === null
      ? h('span.nolimit', {}, 'no limit')
      : h('meter', {
          min: 0,
          max: Number(limit) || 1e-9,
          value: Number(spent),
          high: (Number(limit) || 1e-9) * 0.8,
          optimum: 0,
          'aria-label': `${period} spent`,
        });
  return h(
    'div.limit',
    {},
    h('span.period', {}, period),
    meter,
    h(
      'span.numbers',
      {},
      `spent ${usd(spent)}`,
      limit === null ? '' : ` of ${usd(limit)} · ${usd(remaining)} left`,
      resetsAt ? ` · resets ${when(resetsAt)}` : '',
    ),
  );
}

/** A bar chart of spend per day (uPlot, bundled). */
export function dailyChart(title, days) {
  const box = h('figure.chart', {}, h('figcaption', {}, title));
  const total = days.reduce((sum, d) => sum + Number(d.costUsd), 0);
  box.append(h('p.sr', {}, `${title}: ${days.length} days, total ${usd(total)}`));
  requestAnimationFrame(() => {
    if (!window.uPlot) return;
    const xs = days.map((d) => Date.parse(`${d.day}T00:00:00Z`) / 1000);
    const ys = days.map((d) => Number(d.costUsd));
    const width = Math.max(280, Math.min(box.clientWidth || 640, 900));
    new window.uPlot(
      {
        width,
        height: 200,
        legend: { show: false },
        // Half a day of room on each side, so the first and last bars are drawn whole.
        scales: { x: { time: true, range: (_u, min, max) => [min - 43_200, max + 43_200] } },
        axes: [
          { stroke: '#222' },
          { stroke: '#222', size: 84, values: (_u, v) => v.map((n) => `$${n.toFixed(4)}`) },
        ],
        series: [
          {},
          {
            label: 'USD',
            stroke: '#1d4ed8',
            fill: 'rgba(29,78,216,0.35)',
            paths: window.uPlot.paths.bars({ size: [0.7, 40] }),
            points: { show: false },
          },
        ],
      },
      [xs, ys],
      box,
    );
  });
  return box;
}

/** A modal dialog built from `content`; resolves when closed. */
export function openDialog(title, content) {
  const dialog = h('dialog', { 'aria-label': title }, h('h2', {}, title), content);
  document.body.append(dialog);
  dialog.addEventListener('close', () => dialog.remove());
  dialog.showModal();
  return dialog;
}

/** Shows a secret once, in a read-only field with a copy button. */
export function showSecret(title, secret) {
  const field = h('input.secret', {
    value: secret,
    readOnly: true,
    'aria-label': 'secret',
    id: 'secret',
  });
  const dialog = openDialog(
    title,
    h(
      'div',
      {},
      h('p', {}, 'The secret is shown only now: store it safely. It cannot be shown again.'),
      field,
      h(
        'div.actions',
        {},
        h(
          'button',
          { type: 'button', onclick: () => navigator.clipboard?.writeText(secret) },
          'Copy',
        ),
        h('button', { type: 'button', onclick: () => dialog.close() }, 'Done'),
      ),
    ),
  );
  field.select();
  return dialog;
}

/** A status line for errors and results. */
export function notice(text, kind = 'info') {
  return h(`p.notice.${kind}`, { role: kind === 'error' ? 'alert' : 'status' }, text);
}
