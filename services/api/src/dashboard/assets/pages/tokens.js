// Tokens: mint (the secret is shown once), list, revoke.

import { get, post } from '../api.js';
import { confirmButton, field, form, h, mount, notice, table, time } from '../dom.js';

export async function render(ctx) {
  const { main } = ctx;
  const list = h('section', { 'aria-labelledby': 'tokens-h' });
  const secretBox = h('div', { id: 'minted', 'aria-live': 'polite' });
  const projects = await get('/v1/admin/projects').then((r) => r.projects, () => []);

  async function reload() {
    const { tokens } = await get('/v1/admin/tokens');
    mount(list, h('h2', { id: 'tokens-h' }, 'Tokens'), table('Tokens of the team', [
      { label: 'Name', cell: (t) => h('span', { class: 'token-name' }, t.name) },
      { label: 'Scopes', cell: (t) => t.scopes.join(', ') },
      { label: 'Project', cell: (t) => (t.projectId ? h('code', {}, t.projectId.slice(0, 8)) : 'all') },
      { label: 'Created', cell: (t) => time(t.createdAtEpoch) },
      { label: 'Last used', cell: (t) => time(t.lastUsedAtEpoch) },
      { label: 'Expires', cell: (t) => time(t.expiresAtEpoch) },
      { label: 'State', cell: (t) => (t.revokedAtEpoch ? h('span', { class: 'chip bad' }, 'revoked') : h('span', { class: 'chip ok' }, 'active')) },
      { label: 'Actions', cell: (t) => (t.revokedAtEpoch || t.id === ctx.session.tokenId ? '' : confirmButton(`Revoke ${t.name}`, `Confirm revoking ${t.name}`, async () => {
        await post(`/v1/admin/tokens/${t.id}/revoke`);
        await reload();
      })) },
    ], tokens));
  }

  const scopeBoxes = ['read', 'ingest', 'admin'].map((s) => h('label', { class: 'check' },
    h('input', { type: 'checkbox', name: 'scopes', value: s, checked: s === 'read' }), ` ${s}`));
  const mint = form({ id: 'mint-token', class: 'card' }, [
    h('h2', {}, 'Mint a token'),
    field('Name', h('input', { name: 'name', id: 'mint-name', required: true, maxlength: 200 })),
    h('fieldset', {}, h('legend', {}, 'Scopes'), scopeBoxes),
    field('Project', h('select', { name: 'projectId', id: 'mint-project' },
      h('option', { value: '' }, 'All projects of the team'),
      projects.map((p) => h('option', { value: p.id }, p.slug)))),
    field('Expires in days', h('input', { name: 'days', type: 'number', min: 1, max: 3650, inputmode: 'numeric' }), 'Empty: never.'),
    h('button', { type: 'submit', class: 'primary' }, 'Mint'),
  ], async (data, status) => {
    const days = Number(data.get('days') || 0);
    const body = {
      name: data.get('name'),
      scopes: data.getAll('scopes'),
      projectId: data.get('projectId') || null,
      expiresAtEpoch: days > 0 ? Date.now() + days * 86400000 : null,
    };
    const minted = await post('/v1/admin/tokens', body);
    mount(secretBox, h('div', { class: 'card secret', role: 'status' },
      h('h2', {}, `Token “${minted.token.name}” minted`),
      h('p', {}, 'Copy the secret now: it is not shown again.'),
      h('output', { id: 'minted-secret', class: 'secret-value' }, minted.secret),
      h('button', { type: 'button', onclick: () => navigator.clipboard && navigator.clipboard.writeText(minted.secret) }, 'Copy'),
      h('button', { type: 'button', onclick: () => mount(secretBox) }, 'Done')));
    status.replaceChildren(notice('Minted.'));
    mint.reset();
    await reload();
  });

  mount(main, h('h1', {}, 'Tokens'), secretBox, mint, list);
  await reload();
}
