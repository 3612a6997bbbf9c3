// Sign in with a token: the API checks it and sets an HttpOnly session
// cookie; the token itself is not kept by the browser.

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
  mount(main, h('h1', {}, 'Sign in'), message ? notice(message) : null, f);
  input.focus();
}
