// Whose work a page shows: everyone's, the signed-in member's own, or (for
// admins, who can list the team's members) any one member's.

import { get } from './api.js';
import { field, h } from './dom.js';

/** A select named `memberId` ('' for everyone); null when there is no one to choose. */
export async function personSelect(ctx, onChange) {
  const { session } = ctx;
  const choices = [['', 'Everyone']];
  if (session.memberId) choices.push([session.memberId, 'Me']);
  if (ctx.has('admin')) {
    const members = await get('/v1/admin/members').then((r) => r.members, () => []);
    for (const m of members) {
      if (m.id !== session.memberId) choices.push([m.id, m.name || m.email]);
    }
  }
  if (choices.length === 1) return null;
  const select = h('select', { id: 'person', name: 'memberId', onchange: onChange ? (e) => onChange(e.target.value) : null },
    choices.map(([id, label]) => h('option', { value: id }, label)));
  return field('Person', select);
}
