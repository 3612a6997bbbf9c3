// The audit log: who changed what, newest first.

import { get } from '../api.js';
import { h, mount, table, time } from '../dom.js';

export async function render({ main }) {
  const { entries } = await get('/v1/admin/audit', { limit: 200 });
  mount(main, h('h1', {}, 'Audit log'), table('Latest 200 entries', [
    { label: 'When', cell: (e) => time(e.createdAtEpoch) },
    { label: 'Action', cell: (e) => h('code', {}, e.action) },
    { label: 'Target', cell: (e) => [e.targetType, ' ', e.targetId ? h('code', {}, String(e.targetId).slice(0, 8)) : ''] },
    { label: 'By token', cell: (e) => (e.actorTokenId ? h('code', {}, e.actorTokenId.slice(0, 8)) : '—') },
    { label: 'Detail', cell: (e) => h('code', { class: 'detail' }, JSON.stringify(e.detail)) },
  ], entries, 'No audited change yet.'));
}
