// The review queue of a private-first project: private memories nobody
// rejected, oldest first; a reviewer shares one with the team or rejects
// it (it stays its author's). Editing is the memory's own page's.

import { get, post } from '../api.js';
import { confirmButton, h, mount, notice, table, time } from '../dom.js';
import { projectPicker } from '../project.js';

export async function render(ctx) {
  const { main } = ctx;
  const list = h('section', { id: 'review', 'aria-labelledby': 'review-h' });
  let project = '';

  async function reload() {
    if (!project) return;
    const { memories } = await get('/v1/review', { projectId: project });
    mount(list, h('h2', { id: 'review-h' }, 'Waiting for review'), table('Private memories nobody rejected', [
      { label: 'Written', cell: (m) => time(m.createdAtEpoch) },
      { label: 'Memory', cell: (m) => h('span', { class: 'review-title' }, m.title || '(untitled)') },
      { label: 'Author', cell: (m) => (m.memberId ? h('code', {}, m.memberId.slice(0, 8)) : '—') },
      { label: 'Actions', cell: (m) => [
        h('button', { type: 'button', class: 'primary', 'data-promote': m.id, onclick: async () => {
          await post(`/v1/memories/${m.id}/promote`);
          await reload();
        } }, 'Share with the team'),
        ' ',
        confirmButton('Reject', `Confirm rejecting “${m.title}”`, async () => {
          await post(`/v1/memories/${m.id}/reject`);
          await reload();
        }),
      ] },
    ], memories, 'Nothing waits for review.'));
  }

  const picker = await projectPicker(ctx, (id) => { project = id; reload(); });
  mount(main, h('h1', {}, 'Review'),
    h('p', { class: 'muted' }, 'In a private-first project, memories reach the team once shared.'),
    picker, list);
  if (!project) mount(list, notice('Pick a project.'));
  await reload();
}
