// The team's people: each member with their laptops; offboarding revokes
// every token of theirs at once.

import { get, post } from '../api.js';
import { confirmButton, h, mount, table, time } from '../dom.js';

export async function render(ctx) {
  const { main } = ctx;
  const list = h('section', { id: 'members', 'aria-labelledby': 'members-h' });

  async function reload() {
    const { members } = await get('/v1/admin/members');
    mount(list, h('h2', { id: 'members-h' }, 'Members'), table('Members of the team', [
      { label: 'Member', cell: (m) => h('span', { class: 'member-name' }, m.name || m.email || m.id.slice(0, 8)) },
      { label: 'Email', cell: (m) => m.email || '—' },
      { label: 'Role', cell: (m) => m.role },
      { label: 'Last seen', cell: (m) => time(m.lastSeenAtEpoch) },
      { label: 'Laptops', cell: (m) => h('ul', { class: 'laptops' }, m.laptops.map((l) =>
        h('li', {}, l.host || '?', ' ', l.revoked ? h('span', { class: 'chip bad' }, 'revoked') : h('span', { class: 'muted' }, 'used ', time(l.lastUsedAtEpoch))))) },
      { label: 'State', cell: (m) => (m.offboardedAtEpoch ? h('span', { class: 'chip bad' }, 'offboarded') : h('span', { class: 'chip ok' }, 'active')) },
      { label: 'Actions', cell: (m) => (m.offboardedAtEpoch ? '' : confirmButton(`Offboard ${m.name || m.email}`, `Confirm offboarding ${m.name || m.email}: every token of theirs is revoked`, async () => {
        await post(`/v1/admin/members/${m.id}/offboard`);
        await reload();
      })) },
    ], members, 'No member yet: they appear at their first sign-in with the company account.'));
  }

  mount(main, h('h1', {}, 'Members'), list);
  await reload();
}
