// Observations: the newest first, search with the API's filters, one observation's detail,
// edit (PATCH /v1/memories/{id}), delete (DELETE /v1/memories/{id}) and its feedback
// (GET and POST /v1/memories/{id}/feedback: the counts that move its ranking, each mark).

import { ApiError, del, get, patch, post } from '../api.js';

const KINDS = ['bugfix', 'feature', 'refactor', 'change', 'discovery', 'decision', 'security_alert', 'security_note', 'note'];
import { busy, confirmButton, field, form, h, mount, notice, time } from '../dom.js';
import { personSelect } from '../person.js';
import { currentProject, projectPicker } from '../project.js';

function title(o) {
  const m = o.metadata || {};
  return m.title || (o.content || '').split('\n')[0].slice(0, 120) || o.kind;
}

export async function render(ctx) {
  if (ctx.rest[0]) return renderOne(ctx, ctx.rest[0]);
  const { main } = ctx;
  const results = h('section', { id: 'results', 'aria-live': 'polite' });
  const person = await personSelect(ctx);
  const filters = h('details', {}, h('summary', {}, 'Filters'),
    h('div', { class: 'grid' },
      person,
      field('Type', h('input', { name: 'type', placeholder: 'decision,bugfix' })),
      field('Concept', h('input', { name: 'concept' })),
      field('File', h('input', { name: 'file', placeholder: 'src/main.rs' })),
      field('Agent', h('input', { name: 'agent', placeholder: 'claude-code' })),
      field('Session id', h('input', { name: 'sessionId' })),
      field('From', h('input', { name: 'dateStart', type: 'date' })),
      field('To', h('input', { name: 'dateEnd', type: 'date' })),
      field('Order', h('select', { name: 'orderBy' }, ['relevance', 'newest', 'oldest'].map((v) => h('option', { value: v }, v)))),
      field('Match', h('select', { name: 'mode' }, h('option', { value: '' }, 'server default'), ['fulltext', 'vector', 'hybrid'].map((v) => h('option', { value: v }, v)))),
      field('Per page', h('input', { name: 'limit', type: 'number', min: 1, max: 100, value: 20 })),
    ));
  // Until a search, the newest observations of the project.
  const NEWEST = { orderBy: 'newest', summaries: 'false' };
  let params = NEWEST;
  async function search(cursor) {
    const project = currentProject(ctx.session);
    if (!project) {
      mount(results, notice('Pick a project first.'));
      return;
    }
    const started = performance.now();
    const newest = params === NEWEST;
    const r = await get('/v1/search', { ...params, projectId: project, cursor });
    const hits = r.results.map((hit) => (hit.type === 'observation' && hit.observation
      ? h('li', { class: 'hit' },
        h('a', { href: `#/observations/${hit.observation.id}`, class: 'hit-title' }, title(hit.observation)),
        h('span', { class: 'chip' }, hit.observation.kind),
        h('span', { class: 'muted' }, ` ${time(hit.observation.createdAtEpoch)}`))
      : hit.summary
        ? h('li', { class: 'hit summary' }, h('span', { class: 'chip' }, 'summary'), ' ',
          hit.summary.request || hit.summary.completed || '(summary)',
          hit.summary.serverSessionId ? [' ', h('a', { href: `#/sessions/${hit.summary.serverSessionId}` }, 'session')] : '')
        : null));
    const elapsed = Math.round(performance.now() - started);
    const more = r.nextCursor ? h('button', { type: 'button', onclick: () => show(r.nextCursor) }, newest ? 'Older' : 'Next page') : null;
    const n = r.results.length;
    const count = newest ? `${n} newest observation${n === 1 ? '' : 's'}` : `${n} result${n === 1 ? '' : 's'}`;
    mount(results,
      newest ? h('h2', { id: 'results-h' }, 'Newest observations') : null,
      h('p', { class: 'muted', id: 'search-timing', 'data-ms': elapsed, 'data-kind': newest ? 'newest' : 'search' }, `${count} in ${elapsed} ms`),
      hits.length ? h('ol', { class: 'hits' }, hits) : notice(newest ? 'No observation yet.' : 'No match.'), more);
  }
  const show = (cursor) => busy(() => search(cursor).catch((e) => mount(results, notice(e.message, 'error'))), main);
  const searchForm = form({ id: 'search', class: 'card', role: 'search' }, [
    field('Search', h('input', { name: 'query', id: 'query', type: 'search', placeholder: 'words, "a phrase", -word' })),
    filters,
    h('button', { type: 'submit', class: 'primary' }, 'Search'),
  ], async (data) => {
    params = Object.fromEntries([...data.entries()].filter(([, v]) => v !== ''));
    await search();
  });
  let first = null;
  const picker = await projectPicker(ctx, () => { const shown = show(); first = first || shown; });
  mount(main, h('h1', {}, 'Observations'), picker, searchForm, results);
  await (first || show());
}

async function renderOne(ctx, id) {
  const { main } = ctx;
  const project = currentProject(ctx.session);
  const r = await get('/v1/observations', { projectId: project, ids: id });
  const o = r.observations[0];
  const back = h('p', {}, h('a', { href: '#/observations' }, '← Search'));
  if (!o) {
    mount(main, back, h('h1', {}, 'Observation'), notice('No such observation in this project.', 'error'));
    return;
  }
  const m = o.metadata || {};
  const list = (label, items) => (items && items.length ? [h('dt', {}, label), h('dd', {}, h('ul', {}, items.map((x) => h('li', {}, String(x)))))] : null);
  const detail = h('article', { class: 'card', id: 'observation' },
    h('h1', { id: 'observation-title' }, title(o)),
    m.subtitle ? h('p', { class: 'muted' }, m.subtitle) : null,
    h('dl', { class: 'props' },
      h('dt', {}, 'Kind'), h('dd', {}, o.kind),
      h('dt', {}, 'Created'), h('dd', {}, time(o.createdAtEpoch)),
      h('dt', {}, 'Updated'), h('dd', {}, time(o.updatedAtEpoch)),
      o.serverSessionId ? [h('dt', {}, 'Session'), h('dd', {}, h('a', { href: `#/sessions/${o.serverSessionId}`, id: 'observation-session' }, o.serverSessionId))] : null,
      list('Facts', m.facts), list('Concepts', m.concepts), list('Files read', m.filesRead), list('Files modified', m.filesModified)),
    m.narrative && m.narrative !== o.content ? h('p', { class: 'narrative' }, m.narrative) : null,
    h('pre', { class: 'content', id: 'observation-content' }, o.content));
  const actions = [await feedbackCard(o)];
  if (ctx.has('ingest') || ctx.has('admin')) actions.push(editForm(ctx, o, () => renderOne(ctx, id)));
  if (ctx.has('admin') || ctx.has('ingest')) {
    actions.push(h('p', {}, confirmButton('Delete this memory', 'Confirm delete', async () => {
      await del(`/v1/memories/${o.id}`);
      mount(main, back, notice('Deleted.'));
    })));
  }
  mount(main, back, detail, actions);
}

/** The memory's feedback: counts, a form to mark it, the newest marks. */
async function feedbackCard(o) {
  const card = h('section', { class: 'card', id: 'feedback' });
  async function refresh() {
    const f = await get(`/v1/memories/${o.id}/feedback`);
    const marks = f.marks.map((m) => h('li', { class: 'mark' },
      h('span', { class: 'chip' }, m.verdict), ' ', m.note || '',
      h('span', { class: 'muted' }, ` ${m.markedBy || 'a token since deleted'} · ${new Date(m.createdAt).toLocaleString()}`)));
    mount(card,
      h('h2', {}, 'Feedback'),
      h('p', { id: 'feedback-counts' }, `${f.helpful} helpful · ${f.misleading} misleading`),
      h('p', { class: 'muted' }, 'Each helpful mark raises this memory in its project\'s ranking by 10 %, each misleading one lowers it by 25 % (within ×0.25 and ×1.5).'),
      form({ id: 'feedback-form' }, [
        field('Verdict', h('select', { name: 'verdict', id: 'feedback-verdict' }, ['helpful', 'misleading'].map((v) => h('option', { value: v }, v)))),
        field('Why', h('input', { name: 'note', id: 'feedback-note', maxlength: 1000 })),
        h('button', { type: 'submit' }, 'Mark'),
      ], async (data) => {
        await post(`/v1/memories/${o.id}/feedback`, { verdict: data.get('verdict'), note: String(data.get('note') || '') });
        await refresh();
      }),
      marks.length ? h('ul', { id: 'feedback-marks' }, marks) : h('p', { class: 'muted', id: 'feedback-marks' }, 'No marks yet.'));
  }
  await refresh();
  return card;
}

const lines = (v) => String(v || '').split('\n').map((x) => x.trim()).filter(Boolean);
const commas = (v) => String(v || '').split(',').map((x) => x.trim()).filter(Boolean);
const same = (a, b) => JSON.stringify(a) === JSON.stringify(b);

/** PATCH /v1/memories/{id} with the fields that changed. */
function editForm(ctx, o, done) {
  const m = o.metadata || {};
  const before = {
    title: m.title || '',
    subtitle: m.subtitle || '',
    narrative: m.narrative || o.content || '',
    facts: m.facts || [],
    concepts: m.concepts || [],
    kind: o.kind,
  };
  return form({ id: 'edit-observation', class: 'card' }, [
    h('h2', {}, 'Edit'),
    field('Title', h('input', { name: 'title', id: 'edit-title', value: before.title, maxlength: 300 })),
    field('Subtitle', h('input', { name: 'subtitle', value: before.subtitle, maxlength: 500 })),
    field('Kind', h('select', { name: 'kind' }, KINDS.concat(KINDS.includes(o.kind) ? [] : [o.kind])
      .map((k) => h('option', { value: k, selected: k === o.kind }, k)))),
    field('Narrative', h('textarea', { name: 'narrative', rows: 8, id: 'edit-narrative' }, before.narrative)),
    field('Facts', h('textarea', { name: 'facts', rows: 4 }, before.facts.join('\n')), 'One per line.'),
    field('Concepts', h('input', { name: 'concepts', value: before.concepts.join(', ') }), 'Comma-separated.'),
    h('button', { type: 'submit', class: 'primary' }, 'Save'),
  ], async (data, status) => {
    const after = {
      title: String(data.get('title') || '').trim(),
      subtitle: String(data.get('subtitle') || '').trim(),
      narrative: String(data.get('narrative') || ''),
      facts: lines(data.get('facts')),
      concepts: commas(data.get('concepts')),
      kind: data.get('kind'),
    };
    const body = Object.fromEntries(Object.entries(after).filter(([k, v]) => !same(v, before[k])));
    if (!Object.keys(body).length) {
      status.replaceChildren(notice('Nothing changed.'));
      return;
    }
    try {
      await patch(`/v1/memories/${o.id}`, body);
    } catch (e) {
      if (e instanceof ApiError && (e.code === 'method_not_allowed' || e.code === 'route_not_found')) {
        throw new Error('This server cannot edit memories (PATCH /v1/memories is missing).');
      }
      throw e;
    }
    await done();
  });
}
