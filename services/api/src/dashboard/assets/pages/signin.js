// Sign in with the company's identity provider when the server has single
// sign-on, or with a token (break-glass, air-gapped installs): the API sets
// an HttpOnly session cookie; the token itself is not kept by the browser.

import { api } from '../api.js';
import { field, form, h, mount, notice } from '../dom.js';

export function renderSignIn(main, start, message) {
  const input = h('input', { id: 'token', name: 'token', type: 'password', autocomplete: 'off', required: true, spellcheck: 'false' });
  const f = form({ id: 'sign-in', class: 'card narrow', method: 'post', action: '/dashboard/session' }, [
    field('API token', input, 'A Cairn token (cairn tokens, or the bootstrap admin token). It is sent once; the session lasts a few hours.'),
    h('button', { type: 'submit', class: 'primary' }, 'Sign in'),
  ], async (data) => {
    const session = await api('POST', '/dashboard/session', { token: data.get('token') });
    input.value = '';
    start(session);
  });
  const sso = h('p', { id: 'sso', class: 'card narrow', hidden: true },
    h('a', { id: 'sso-sign-in', class: 'button primary', href: `/auth/oidc/login?next=${encodeURIComponent(location.pathname + location.hash)}` }, 'Sign in with your company account'));
  mount(main, h('h1', {}, 'Sign in'), message ? notice(message) : null, sso, f);
  input.focus();
  api('GET', '/auth/oidc').then((status) => {
    if (status && status.enabled) sso.hidden = false;
  }, () => {});
}
