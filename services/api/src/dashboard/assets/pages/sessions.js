// Sessions of a project, and one session as a timeline: its turns, their
// events, the observations and summaries each produced, the job and its usage.

import { get } from '../api.js';
import { busy, h, mount, notice, table, time } from '../dom.js';
import { personSelect } from '../person.js';
import { projectPicker } from '../project.js';

const plural = (n, word) => `${n} ${word}${n === 1 ? '' : 's'}`;
const count = (n) => Number(n).toLocaleString('en-US');

/** A job's usage as stored by the generator ({provider, model, input_tokens,
 * output_tokens, cached_tokens, cache_creation_tokens, latency_ms}), in a
 * few words: "in 1,234 · out 56 tokens · 1.2 s"; the model in its title. */
function usageText(u) {
  if (!u || typeof u !== 'object') return '—';
  const num = (...keys) => {
    for (const k of keys) if (typeof u[k] === 'number') return u[k];
    return null;
  };
  const input = num('input_tokens', 'inputTokens');
  const output = num('output_tokens', 'outputTokens');
  const cached = num('cached_tokens', 'cachedTokens');
  const ms = num('latency_ms', 'latencyMs');
  const parts = [];
  if (input != null || output != null) parts.push(`in ${count(input ?? 0)} · out ${count(output ?? 0)} tokens`);
  if (cached) parts.push(`${count(cached)} cached`);
  if (ms) parts.push(ms < 1000 ? `${Math.round(ms)} ms` : `${(ms / 1000).toFixed(1)} s`);
  if (!parts.length) parts.push(u.model || u.provider || '—');
  return parts.join(' · ');
}

function usageCell(u) {
  if (!u) return '—';
  const model = [u.provider, u.model].filter(Boolean).join(' ');
  return h('span', { class: 'usage', title: model || null }, usageText(u));
}

function missing(e, what) {
  return notice(e.status === 404 && e.code === 'route_not_found' ? `${what} is not served by this API version.` : e.message, e.status === 404 ? 'info' : 'error');
}

export async function render(ctx) {
  if (ctx.rest[0]) return renderOne(ctx, ctx.rest[0]);
  const { main } = ctx;
  const list = h('section', { id: 'sessions', 'aria-live': 'polite' });
  let shown = { project: null, member: '' };
  async function load(project, cursor) {
    shown = { ...shown, project };
    if (!project) { mount(list, notice('Pick a project first.')); return; }
    let r;
    try {
      r = await get('/v1/sessions', { projectId: project, cursor, memberId: shown.member || undefined });
    } catch (e) {
      mount(list, missing(e, 'The sessions list'));
      return;
    }
    mount(list, table('Sessions, latest first', [
      { label: 'Started', cell: (x) => h('a', { href: `#/sessions/${x.id}` }, time(x.startedAt)) },
      { label: 'Agent', cell: (x) => x.agent },
      { label: 'Directory', cell: (x) => (x.cwd ? h('code', {}, x.cwd) : '') },
      { label: 'Turns', cell: (x) => String(x.turns ?? '') },
      { label: 'Events', cell: (x) => String(x.events ?? '') },
      { label: 'Observations', cell: (x) => String(x.observations ?? '') },
      { label: 'Last event', cell: (x) => time(x.lastEventAt) },
      { label: 'Ended', cell: (x) => (x.endedAt ? time(x.endedAt) : 'open') },
    ], r.sessions, 'No session yet.'),
    r.nextCursor ? h('button', { type: 'button', onclick: () => busy(load(project, r.nextCursor), main) }, 'Older sessions') : null);
    // Whose sessions the list shows now ('' for everyone's).
    list.dataset.member = shown.member;
  }
  let first = null;
  const person = await personSelect(ctx, (member) => {
    shown = { ...shown, member };
    busy(load(shown.project), main);
  });
  const picker = await projectPicker(ctx, (p) => { const loading = busy(load(p), main); first = first || loading; });
  mount(main, h('h1', {}, 'Sessions'), picker, person ? h('div', { class: 'picker' }, person) : null, list);
  await first;
}

async function renderOne(ctx, id) {
  const { main } = ctx;
  const back = h('p', {}, h('a', { href: '#/sessions' }, '← Sessions'));
  let t;
  try {
    t = await get(`/v1/sessions/${encodeURIComponent(id)}/timeline`);
  } catch (e) {
    mount(main, back, h('h1', {}, 'Session'), missing(e, 'The session timeline'));
    return;
  }
  const s = t.session || {};
  const turns = (t.turns || []).map((turn) => h('li', { class: 'turn' },
    h('h2', {}, `Turn ${turn.promptNumber ?? '—'}`, turn.recovery ? [' ', h('span', { class: 'chip', title: 'Work that came without a prompt' }, 'recovery')] : null, h('span', { class: 'muted' }, ` ${time(turn.startedAt)}`)),
    turn.prompt ? h('blockquote', { class: 'prompt' }, turn.prompt) : null,
    turn.events && turn.events.length ? h('details', {}, h('summary', {}, turn.eventCount > turn.events.length ? `${turn.eventCount} events (first ${turn.events.length})` : plural(turn.events.length, 'event')),
      h('ol', { class: 'events' }, turn.events.map((e) => h('li', {}, h('code', {}, e.eventType), e.toolName ? ` ${e.toolName}` : '', h('span', { class: 'muted' }, ` ${time(e.occurredAt)}`), e.afterEnd ? [' ', h('span', { class: 'chip', title: 'Came after the sweeper ended the session' }, 'after end')] : null)))) : null,
    turn.observations && turn.observations.length ? h('div', {}, h('h3', {}, 'Observations'),
      h('ul', {}, turn.observations.map((o) => h('li', {}, h('span', { class: 'chip' }, o.kind), ' ', h('a', { href: `#/observations/${o.id}` }, o.title || o.id))))) : null,
    turn.summaries && turn.summaries.length ? h('div', {}, h('h3', {}, 'Summaries'),
      turn.summaries.map((x) => h('p', { class: 'summary' }, h('span', { class: 'chip' }, x.scope), ' ', x.completed || x.request || ''))) : null,
    turn.jobs && turn.jobs.length ? h('div', {}, h('h3', {}, 'Jobs'), table('Jobs of the turn', [
      { label: 'Type', cell: (j) => j.jobType },
      { label: 'Status', cell: (j) => h('span', { class: `chip status-${j.status}` }, j.status) },
      { label: 'Attempts', cell: (j) => String(j.attempts) },
      { label: 'Usage', cell: (j) => usageCell(j.usage) },
      { label: 'Error', cell: (j) => j.lastError || '' },
    ], turn.jobs)) : null));
  mount(main, back,
    h('h1', { id: 'session-title' }, `Session ${String(s.id || id).slice(0, 8)}`),
    h('dl', { class: 'props' },
      h('dt', {}, 'Agent'), h('dd', {}, s.agent || '—'),
      h('dt', {}, 'Directory'), h('dd', {}, s.cwd || '—'),
      h('dt', {}, 'Started'), h('dd', {}, time(s.startedAt)),
      h('dt', {}, 'Ended'), h('dd', {}, s.endedAt ? time(s.endedAt) + (s.endedBy === 'sweeper' ? ' (no activity: ended by the sweeper)' : '') : 'open')),
    t.turnsTruncated ? notice(`Showing the newest ${turns.length} turns.`) : null,
    turns.length ? h('ol', { class: 'timeline' }, turns) : notice('No turn recorded.'),
    t.summaries && t.summaries.length ? [h('h2', {}, 'Session summaries'),
      t.summaries.map((x) => h('p', { class: 'summary' }, h('span', { class: 'chip' }, x.scope), ' ', x.completed || x.request || ''))] : null,
    t.jobs && t.jobs.length ? [h('h2', {}, 'Session jobs'), table('Jobs of no turn', [
      { label: 'Type', cell: (j) => j.jobType },
      { label: 'Status', cell: (j) => h('span', { class: `chip status-${j.status}` }, j.status) },
      { label: 'Usage', cell: (j) => usageCell(j.usage) },
    ], t.jobs)] : null);
}
