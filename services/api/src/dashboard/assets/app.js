// The dashboard's shell: the session, the who-am-I header, the navigation
// (only the pages the token's scopes allow) and the hash router.

import { api, setCsrf, whenUnauthorized } from './api.js';
import { busy, h, mount, notice } from './dom.js';
import { renderSignIn } from './pages/signin.js';

const PAGES = [
  { path: 'observations', label: 'Observations', scope: 'read', load: () => import('./pages/observations.js') },
  { path: 'sessions', label: 'Sessions', scope: 'read', load: () => import('./pages/sessions.js') },
  { path: 'jobs', label: 'Jobs', scope: 'read', load: () => import('./pages/jobs.js') },
  { path: 'live', label: 'Live', scope: 'read', load: () => import('./pages/live.js') },
  { path: 'projects', label: 'Projects', scope: 'admin', load: () => import('./pages/projects.js') },
  { path: 'tokens', label: 'Tokens', scope: 'admin', load: () => import('./pages/tokens.js') },
  { path: 'members', label: 'Members', scope: 'admin', load: () => import('./pages/members.js') },
  { path: 'review', label: 'Review', scope: 'admin', load: () => import('./pages/review.js') },
  { path: 'audit', label: 'Audit log', scope: 'admin', load: () => import('./pages/audit.js') },
  { path: 'teams', label: 'Teams', scope: 'superadmin', load: () => import('./pages/teams.js') },
  { path: 'cli', label: 'Laptop sign-in', scope: 'ingest', hidden: true, load: () => import('./pages/cli_login.js') },
];

const main = document.getElementById('main');
const nav = document.getElementById('nav');
const who = document.getElementById('who');
let session = null;
let cleanup = null;

/** What the API allows this token: a scope it holds, or any with superadmin
 * (as `Auth::require` decides; the API enforces it on every call). */
export function has(scope) {
  if (!session) return false;
  const s = session.scopes;
  return s.includes('superadmin') || s.includes(scope);
}

function route() {
  const hash = location.hash.startsWith('#/') ? location.hash.slice(2) : '';
  const [path, ...rest] = hash.split('/');
  return { path: decodeURIComponent(path || ''), rest: rest.map(decodeURIComponent) };
}

function renderHeader() {
  mount(who,
    h('span', { class: 'who-name', id: 'who-name' }, session.name || 'token'),
    h('span', { class: 'who-team', id: 'who-team', title: session.teamId }, 'team ', session.teamName || session.teamSlug || session.teamId.slice(0, 8)),
    session.projectId ? h('span', {}, 'project ', h('code', {}, session.projectId.slice(0, 8))) : null,
    h('span', { class: 'scopes', id: 'who-scopes' }, session.scopes.map((s) => h('span', { class: 'chip' }, s))),
    h('button', { type: 'button', id: 'sign-out', onclick: signOut }, 'Sign out'));
  const allowed = PAGES.filter((p) => has(p.scope) && !p.hidden);
  mount(nav, h('ul', {}, allowed.map((p) => h('li', {}, h('a', { href: `#/${p.path}`, 'data-page': p.path }, p.label)))));
}

/** A fresh root for what a page shows, inside <main>. A page draws only
 * into its own view, so one still loading after the reader moved on draws
 * into a detached node, never over the page that replaced it. The view
 * names its route (`data-route`, the hash) and says when the page's data
 * is in (`data-loaded`) and while work is in flight (`aria-busy`, from
 * dom.js's `busy`): the tests wait on these, not on a clock. */
function newView() {
  const view = h('div', { id: 'view', class: 'view', 'data-route': location.hash });
  mount(main, view);
  return view;
}

function loaded(view) {
  view.dataset.loaded = '';
}

async function show(moved = false) {
  if (!session) return;
  if (cleanup) { cleanup(); cleanup = null; }
  const view = newView();
  const { path, rest } = route();
  const allowed = PAGES.filter((p) => has(p.scope) && !p.hidden);
  const page = PAGES.find((p) => p.path === path) || (path ? null : allowed[0]);
  for (const a of nav.querySelectorAll('a')) {
    if (page && a.dataset.page === page.path) a.setAttribute('aria-current', 'page');
    else a.removeAttribute('aria-current');
  }
  if (!page) {
    mount(view, h('h1', {}, 'Not found'), notice(`There is no page “${path}”.`, 'error'));
  } else if (!has(page.scope)) {
    mount(view, h('h1', { id: 'refused' }, 'Not allowed'),
      notice(`This token lacks the “${page.scope}” scope that the ${page.label} page needs.`, 'error'));
  } else {
    mount(view, h('h1', {}, page.label), h('p', { class: 'muted' }, 'Loading…'));
    await busy(async () => {
      try {
        const mod = await page.load();
        const ctx = { main: view, session, has, rest, onLeave: (f) => { if (view.isConnected) cleanup = f; else f(); } };
        await mod.render(ctx);
        // After a navigation, focus moves to the new content (not on first load).
        if (moved && view.isConnected) main.focus({ preventScroll: true });
      } catch (e) {
        mount(view, h('h1', {}, page.label), notice(e.message || String(e), 'error'));
      }
    }, view);
  }
  loaded(view);
}

async function signOut() {
  if (cleanup) { cleanup(); cleanup = null; }
  await api('DELETE', '/dashboard/session').catch(() => {});
  session = null;
  setCsrf(null);
  signedOut('Signed out.');
}

function signedOut(message) {
  session = null;
  mount(who);
  mount(nav);
  const view = newView();
  renderSignIn(view, start, message);
  loaded(view);
}

function start(s) {
  session = s;
  setCsrf(s.csrf);
  renderHeader();
  if (!location.hash.startsWith('#/')) {
    const first = PAGES.find((p) => has(p.scope) && !p.hidden);
    if (first) { location.hash = `#/${first.path}`; return; }
  }
  show();
}

whenUnauthorized(() => signedOut('Your session has ended: sign in again.'));
window.addEventListener('hashchange', () => { if (location.hash.startsWith('#/')) show(true); });
document.getElementById('skip').addEventListener('click', (ev) => {
  ev.preventDefault();
  main.focus();
});

api('GET', '/dashboard/session').then(start, () => signedOut());
