// Projects: list, create, and one project's settings and cwd rules.

import { del, get, patch, post } from '../api.js';
import { confirmButton, field, form, h, mount, notice, table, time } from '../dom.js';

export async function render(ctx) {
  if (ctx.rest[0]) return renderOne(ctx, ctx.rest[0]);
  const { main } = ctx;
  const list = h('section', {});
  async function reload() {
    const { projects } = await get('/v1/admin/projects');
    mount(list, table('Projects of the team', [
      { label: 'Slug', cell: (p) => h('a', { href: `#/projects/${p.id}` }, p.slug) },
      { label: 'Name', cell: (p) => p.name },
      { label: 'Context budget', cell: (p) => `${p.contextBudgetTokens} tokens` },
      { label: 'Prompt context', cell: (p) => (p.promptContext ? `on, ${p.promptContextBudgetTokens} tokens` : 'off') },
      { label: 'Created', cell: (p) => time(p.createdAtEpoch) },
    ], projects));
  }
  const create = form({ id: 'new-project', class: 'card' }, [
    h('h2', {}, 'New project'),
    field('Slug', h('input', { name: 'slug', required: true, pattern: '[a-z0-9._-]+' })),
    field('Name', h('input', { name: 'name' })),
    h('button', { type: 'submit', class: 'primary' }, 'Create'),
  ], async (data) => {
    await post('/v1/admin/projects', { slug: data.get('slug'), name: data.get('name') || null });
    create.reset();
    await reload();
  });
  mount(main, h('h1', {}, 'Projects'), create, list);
  await reload();
}

function numberOrNull(v) {
  const s = String(v ?? '').trim();
  return s === '' ? null : Number(s);
}

async function renderOne(ctx, id) {
  const { main } = ctx;
  const { projects } = await get('/v1/admin/projects');
  const p = projects.find((x) => x.id === id);
  if (!p) {
    mount(main, h('h1', {}, 'Project'), notice('No such project.', 'error'));
    return;
  }
  const usage = await get(`/v1/projects/${p.id}/usage`, { days: 1 }).catch(() => null);
  const budget = (usage && usage.dailyTokenBudget) ?? '';
  const settings = form({ id: 'project-settings', class: 'card' }, [
    h('h2', {}, 'Settings'),
    field('Context budget (tokens)', h('input', { name: 'contextBudgetTokens', type: 'number', min: 1, value: p.contextBudgetTokens }),
      'What SessionStart and /v1/context may fill.'),
    h('label', { class: 'check' }, h('input', { type: 'checkbox', name: 'promptContext', checked: p.promptContext }), ' Related memories on each prompt'),
    field('Prompt context budget (tokens)', h('input', { name: 'promptContextBudgetTokens', type: 'number', min: 1, value: p.promptContextBudgetTokens })),
    field('LLM daily token budget', h('input', { name: 'llmDailyTokenBudget', type: 'number', min: 0, value: budget }), 'Empty: unlimited.'),
    h('button', { type: 'submit', class: 'primary' }, 'Save'),
  ], async (data, status) => {
    await patch(`/v1/admin/projects/${p.id}`, {
      contextBudgetTokens: numberOrNull(data.get('contextBudgetTokens')),
      promptContext: data.get('promptContext') === 'on',
      promptContextBudgetTokens: numberOrNull(data.get('promptContextBudgetTokens')),
      llmDailyTokenBudget: numberOrNull(data.get('llmDailyTokenBudget')),
    });
    status.replaceChildren(notice('Saved.'));
  });
  const rules = h('section', {});
  async function reloadRules() {
    const r = await get(`/v1/admin/projects/${p.id}/rules`);
    mount(rules, h('h2', {}, 'Working-directory rules'), table('Hooks from these places land in this project', [
      { label: 'Kind', cell: (x) => x.kind },
      { label: 'Pattern', cell: (x) => h('code', {}, x.pattern) },
      { label: 'Created', cell: (x) => time(x.createdAtEpoch) },
      { label: 'Actions', cell: (x) => confirmButton('Delete', 'Confirm delete', async () => { await del(`/v1/admin/project-rules/${x.id}`); await reloadRules(); }) },
    ], r.rules, 'No rules: hooks must name the project.'));
  }
  const addRule = form({ id: 'new-rule', class: 'card' }, [
    h('h2', {}, 'Add a rule'),
    field('Kind', h('select', { name: 'kind' }, h('option', { value: 'git_remote' }, 'git remote'), h('option', { value: 'path_prefix' }, 'path prefix'))),
    field('Pattern', h('input', { name: 'pattern', required: true, placeholder: 'git@github.com:org/repo.git, or /home/me/src/repo' })),
    h('button', { type: 'submit', class: 'primary' }, 'Add'),
  ], async (data) => {
    await post(`/v1/admin/projects/${p.id}/rules`, { kind: data.get('kind'), pattern: data.get('pattern') });
    addRule.reset();
    await reloadRules();
  });
  mount(main, h('p', {}, h('a', { href: '#/projects' }, '← Projects')), h('h1', {}, `Project ${p.slug}`), settings, rules, addRule);
  await reloadRules();
}
