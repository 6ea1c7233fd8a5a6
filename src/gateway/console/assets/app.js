// The console shell: one page answer per view (no request waterfall), hash routes, sign-in/out.

import { keysPage } from './admin.js';
import { ApiError, loadView, signOut } from './api.js';
import { membersPage } from './members.js';
import { networkPage, walletsPage } from './network.js';
import { auditPage, logsPage, mePage, signInPage, usagePage } from './pages.js';
import { policiesPage } from './policies.js';
import { h, notice } from './ui.js';

const main = document.getElementById('main');
const top = document.getElementById('top');

const STAFF_NAV = [
  ['keys', 'Keys'],
  ['members', 'Members'],
  ['policies', 'Policies'],
  ['logs', 'Logs'],
  ['usage', 'Usage'],
  ['network', 'Network'],
  ['wallets', 'Wallets'],
];

function route() {
  const [page, query = ''] = location.hash.replace(/^#\/?/, '').split('?');
  return { page: page || 'home', query };
}

function go(page, query = '') {
  const hash = `#/${page}${query ? `?${query}` : ''}`;
  if (location.hash === hash) render();
  else location.hash = hash;
}

function header(session, page) {
  const nav =
    session.kind === 'key'
      ? [['me', 'My key']]
      : [...STAFF_NAV, ...(session.kind === 'admin' ? [['audit', 'Audit']] : [])];
  top.replaceChildren(
    h('span.brand', {}, 'svc console'),
    h(
      'nav',
      { 'aria-label': 'Pages' },
      h(
        'ul',
        {},
        nav.map(([name, label]) =>
          h(
            'li',
            {},
            h('a', { href: `#/${name}`, 'aria-current': name === page ? 'page' : null }, label),
          ),
        ),
      ),
    ),
    h(
      'span.who',
      {},
      `${session.kind === 'key' ? 'key' : session.kind}: ${session.name}`,
      h(
        'button',
        {
          type: 'button',
          id: 'sign-out',
          onclick: async () => {
            await signOut();
            render();
          },
        },
        'Sign out',
      ),
    ),
  );
}

/** Each render has a number; an answer that arrives after a newer render started is dropped. */
let renders = 0;

async function render() {
  const { page, query } = route();
  const mine = ++renders;
  try {
    const { session, data } = await loadView(page, query);
    if (mine !== renders) return;
    header(session, data.page);
    const reload = () => render();
    const views = {
      me: () => mePage(data),
      keys: () => keysPage(data, reload),
      members: () => membersPage(data, reload, session.kind === 'admin'),
      policies: () => policiesPage(data, reload, session.kind === 'admin'),
      logs: () => logsPage(data, query, go),
      usage: () => usagePage(data),
      network: () => networkPage(data),
      wallets: () => walletsPage(data),
      audit: () => auditPage(data),
    };
    main.replaceChildren(views[data.page]());
    document.title = `svc console · ${data.page}`;
  } catch (error) {
    if (mine !== renders) return;
    if (error instanceof ApiError && error.status === 401) {
      top.replaceChildren(h('span.brand', {}, 'svc console'));
      const message = error.code === 'console_sign_in_required' ? undefined : error.message;
      main.replaceChildren(signInPage(() => go('home'), message));
      document.title = 'svc console · sign in';
      return;
    }
    main.replaceChildren(notice(error.message ?? String(error), 'error'));
  }
}

window.addEventListener('hashchange', render);
render();
