// Approving `cairn login` for a laptop: the page shows the host and the code
// the terminal shows; the member approves, the terminal collects its token.

import { api, get } from '../api.js';
import { h, mount, notice } from '../dom.js';

export async function render({ main, rest }) {
  const id = rest[0] || '';
  const login = await get(`/auth/cli/${encodeURIComponent(id)}`);
  const done = () => mount(main, h('h1', {}, 'Laptop signed in'),
    notice(`${login.host} has its token: return to your terminal.`), h('p', { id: 'cli-approved' }, 'You can close this page.'));
  if (login.approved) { done(); return; }
  const approve = h('button', { type: 'button', id: 'cli-approve', class: 'primary', onclick: async () => {
    approve.disabled = true;
    await api('POST', `/auth/cli/${encodeURIComponent(id)}/approve`);
    done();
  } }, `Approve ${login.host}`);
  mount(main, h('h1', {}, 'Sign in a laptop'),
    h('p', {}, 'The computer ', h('strong', { id: 'cli-host' }, login.host),
      ' asks for a token to send its coding agents\u2019 work to Cairn and get memory back, as you.'),
    h('p', {}, 'Approve only if your terminal shows this code: ', h('code', { id: 'cli-code', class: 'code-big' }, login.userCode)),
    approve);
}
