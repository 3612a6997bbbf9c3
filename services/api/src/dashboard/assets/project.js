// Which project the pages show: a project token's own, or one picked from
// the team's projects (admins), or typed by slug or id (read-only team tokens).

import { get } from './api.js';
import { field, h } from './dom.js';

const KEY = 'cairn.project';

export function currentProject(session) {
  return session.projectId || sessionStorage.getItem(KEY) || '';
}

/** A picker that calls `onChange(projectId)` now (if one is known) and on change. */
export async function projectPicker(ctx, onChange) {
  const { session } = ctx;
  if (session.projectId) {
    onChange(session.projectId);
    return h('p', { class: 'muted' }, 'Project ', h('code', {}, session.projectId));
  }
  let projects = null;
  if (ctx.has('admin')) {
    projects = await get('/v1/admin/projects').then((r) => r.projects, () => null);
  }
  const remember = (v) => { sessionStorage.setItem(KEY, v); onChange(v); };
  if (projects && projects.length) {
    let chosen = currentProject(session);
    if (!projects.some((p) => p.id === chosen)) chosen = projects[0].id;
    const select = h('select', { id: 'project', name: 'project', onchange: (e) => remember(e.target.value) },
      projects.map((p) => h('option', { value: p.id, selected: p.id === chosen }, `${p.name || p.slug} (${p.slug})`)));
    remember(chosen);
    return h('div', { class: 'picker' }, field('Project', select));
  }
  const input = h('input', { id: 'project', name: 'project', value: currentProject(session), placeholder: 'slug or id' });
  const use = h('button', { type: 'button', onclick: () => remember(input.value.trim()) }, 'Show');
  if (input.value) onChange(input.value);
  return h('div', { class: 'picker inline' }, field('Project', input), use);
}
