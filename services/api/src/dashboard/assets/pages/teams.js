// Teams (superadmin): list and create.

import { get, patch, post } from '../api.js';
import { busy, field, form, h, mount, notice, table, time } from '../dom.js';

export async function render({ main }) {
  const list = h('section', {});
  async function reload() {
    const { teams } = await get('/v1/admin/teams');
    mount(list, table('Teams', [
      { label: 'Slug', cell: (t) => h('code', {}, t.slug) },
      { label: 'Name', cell: (t) => t.name },
      { label: 'Id', cell: (t) => h('code', {}, t.id) },
      { label: 'Created', cell: (t) => time(t.createdAtEpoch) },
      { label: 'LLM daily budget', cell: (t) => budgetForm(t) },
    ], teams));
  }
  const create = form({ id: 'new-team', class: 'card' }, [
    h('h2', {}, 'New team'),
    field('Slug', h('input', { name: 'slug', required: true, pattern: '[a-z0-9._-]+' })),
    field('Name', h('input', { name: 'name', required: true })),
    h('button', { type: 'submit', class: 'primary' }, 'Create'),
  ], async (data) => {
    await post('/v1/admin/teams', { slug: data.get('slug'), name: data.get('name') });
    create.reset();
    await reload();
  });
  mount(main, h('h1', {}, 'Teams'), create, list);
  await reload();
}

/** Sets or removes a team's daily LLM token budget (the API does not list it). */
function budgetForm(team) {
  const input = h('input', { name: 'budget', type: 'number', min: 1, required: true, 'aria-label': `LLM daily token budget of ${team.slug}`, class: 'budget-input' });
  const show = (status, value) => status.replaceChildren(notice(value == null ? 'No budget.' : `Budget: ${value} tokens a day.`));
  const f = form({ class: 'inline-form', 'data-team': team.slug }, [
    input,
    h('button', { type: 'submit' }, 'Set'),
    h('button', { type: 'button', onclick: () => busy(async () => {
      const r = await patch(`/v1/admin/teams/${team.id}`, { llmDailyTokenBudget: null });
      show(f.querySelector('.form-status'), r.llmDailyTokenBudget);
    }, f.closest('.view') || undefined).catch((e) => f.querySelector('.form-status').replaceChildren(notice(e.message, 'error'))) }, 'Remove'),
  ], async (data, status) => {
    const r = await patch(`/v1/admin/teams/${team.id}`, { llmDailyTokenBudget: Number(data.get('budget')) });
    show(status, r.llmDailyTokenBudget);
  });
  return f;
}
