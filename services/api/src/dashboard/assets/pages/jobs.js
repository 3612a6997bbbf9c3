// Jobs by status with retry and cancel; queue health; LLM tokens per day
// against the project's budget.

import { get, post } from '../api.js';
import { barChart, miniBars } from '../chart.js';
import { busy, confirmButton, field, h, mount, notice, table, time } from '../dom.js';
import { projectPicker } from '../project.js';

const STATUSES = ['', 'queued', 'processing', 'failed', 'completed', 'cancelled'];

export async function render(ctx) {
  const { main } = ctx;
  const jobs = h('section', { id: 'jobs', 'aria-labelledby': 'jobs-h' });
  const queue = h('section', { id: 'queue', 'aria-labelledby': 'queue-h' });
  const usage = h('section', { id: 'usage', 'aria-labelledby': 'usage-h' });
  const status = h('select', { id: 'job-status', name: 'status', onchange: () => busy(loadJobs(), main).catch((e) => jobs.prepend(notice(e.message, 'error'))) },
    STATUSES.map((s) => h('option', { value: s, selected: s === '' }, s || 'any')));

  async function act(job, what) {
    await post(`/v1/jobs/${job.id}/${what}`);
    await loadJobs();
  }

  async function loadJobs() {
    const r = await get('/v1/jobs', { status: status.value, limit: 100 });
    mount(jobs, h('h2', { id: 'jobs-h' }, 'By status'), h('div', { class: 'picker' }, field('Status', status)),
      h('p', { class: 'muted' }, `${r.total} jobs`),
      table('Generation jobs, newest first', [
        { label: 'Job', cell: (j) => h('code', {}, j.id.slice(0, 8)) },
        { label: 'Type', cell: (j) => j.jobType },
        { label: 'Status', cell: (j) => h('span', { class: `chip status-${j.status}`, 'data-job': j.id }, j.status) },
        { label: 'Attempts', cell: (j) => `${j.attempts}/${j.maxAttempts}` },
        { label: 'Last error', cell: (j) => (j.lastError ? h('span', { class: 'error-text' }, j.lastError.slice(0, 200)) : '') },
        { label: 'Session', cell: (j) => (j.serverSessionId ? h('a', { href: `#/sessions/${j.serverSessionId}` }, j.serverSessionId.slice(0, 8)) : '') },
        { label: 'Updated', cell: (j) => time(j.updatedAtEpoch) },
        { label: 'Actions', cell: (j) => (ctx.has('admin') ? [
          ['failed', 'cancelled'].includes(j.status) ? h('button', { type: 'button', class: 'retry', onclick: () => busy(act(j, 'retry'), main).catch((e) => jobs.prepend(notice(e.message, 'error'))) }, `Retry ${j.id.slice(0, 8)}`) : null,
          ['queued', 'processing'].includes(j.status) ? confirmButton(`Cancel ${j.id.slice(0, 8)}`, 'Confirm cancel', () => act(j, 'cancel')) : null,
        ] : '') },
      ], r.jobs, 'No job with this status.'));
  }

  async function loadQueue() {
    if (!ctx.has('admin')) return;
    let q;
    try {
      q = await get('/v1/admin/queue');
    } catch (e) {
      mount(queue, h('h2', { id: 'queue-h' }, 'Queue health'), notice(e.status === 404 ? 'Queue health is not served by this API version.' : e.message, e.status === 404 ? 'info' : 'error'));
      return;
    }
    const d = q.depth || {};
    mount(queue, h('h2', { id: 'queue-h' }, 'Queue health'),
      h('dl', { class: 'stats' },
        ['queued', 'processing', 'failed', 'cancelled'].map((k) => h('div', {}, h('dt', {}, k), h('dd', { id: `depth-${k}` }, String(d[k] ?? 0)))),
        h('div', {}, h('dt', {}, 'oldest due'), h('dd', {}, q.oldestDueAgeSeconds == null ? '—' : `${Math.round(q.oldestDueAgeSeconds)} s`)),
        h('div', {}, h('dt', {}, 'done, last 5 min'), h('dd', {}, String(q.completedLast5m ?? 0)))),
      q.completedPerMinute && q.completedPerMinute.length
        ? miniBars('Jobs completed per minute', q.completedPerMinute.map((m) => ({ label: String(m.minute), value: m.count })))
        : null,
      table('Failures by class', [
        { label: 'Class', cell: (f) => f.class },
        { label: 'Count', cell: (f) => String(f.count) },
      ], q.failuresByClass || [], 'No failures.'));
  }

  async function loadUsage(project) {
    if (!project) return;
    try {
      const u = await get(`/v1/projects/${encodeURIComponent(project)}/usage`, { days: 30 });
      mount(usage, h('h2', { id: 'usage-h' }, 'LLM tokens per day'),
        barChart(`LLM tokens per day, last 30 days${u.dailyTokenBudget ? `, budget ${u.dailyTokenBudget}` : ', no budget'}`,
          u.days.map((d) => ({ label: d.day, value: d.totalTokens })), u.dailyTokenBudget));
    } catch (e) {
      mount(usage, h('h2', { id: 'usage-h' }, 'LLM tokens per day'), notice(e.message, 'error'));
    }
  }

  // Job changes of the chosen project refresh the list as they happen.
  let live = null;
  let pending = null;
  const follow = (project) => {
    if (live) live.close();
    live = project ? new EventSource(`/v1/live?projectId=${encodeURIComponent(project)}`) : null;
    if (live) {
      live.onopen = () => { jobs.dataset.live = 'open'; };
      live.addEventListener('job.changed', () => {
        clearTimeout(pending);
        pending = setTimeout(() => { busy(Promise.all([loadJobs(), loadQueue()]), main).catch(() => {}); }, 300);
      });
    }
  };
  let firstUsage = null;
  const picker = await projectPicker(ctx, (p) => {
    const loading = busy(loadUsage(p), main);
    firstUsage = firstUsage || loading;
    follow(p);
  });
  mount(main, h('h1', {}, 'Jobs'), jobs, queue, h('div', { class: 'picker-row' }, picker), usage);
  await Promise.all([loadJobs(), loadQueue(), firstUsage]);
  const timer = setInterval(() => { loadQueue().catch(() => {}); }, 15000);
  ctx.onLeave(() => { clearInterval(timer); clearTimeout(pending); if (live) live.close(); });
}
