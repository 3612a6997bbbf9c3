// Live: new observations, summaries and job changes of a project as they
// happen (Server-Sent Events from /v1/live, authorised by the session cookie).

import { h, mount, notice, time } from '../dom.js';
import { projectPicker } from '../project.js';

export async function render(ctx) {
  const { main } = ctx;
  const feed = h('ol', { id: 'live-feed', class: 'feed', 'aria-live': 'polite' });
  const state = h('p', { id: 'live-state', class: 'muted', role: 'status' }, 'Not connected.');
  let source = null;
  const close = () => { if (source) { source.close(); source = null; } };
  ctx.onLeave(close);

  function add(kind, data) {
    let body;
    if (kind === 'observation.created') {
      body = [h('span', { class: 'chip' }, data.kind || 'observation'), ' ',
        data.id ? h('a', { href: `#/observations/${data.id}`, class: 'live-observation' }, data.title || data.id) : (data.title || '')];
    } else if (kind === 'job.changed') {
      const id = String(data.jobId || data.job_id || data.id || '');
      body = [h('span', { class: `chip status-${data.status}` }, data.status || 'job'), ' job ', h('code', { 'data-job': id }, id.slice(0, 8)), data.jobType ? ` ${data.jobType}` : ''];
    } else {
      body = [h('span', { class: 'chip' }, 'summary'), ' ', data.title || data.completed || data.request || data.id || ''];
    }
    feed.prepend(h('li', { 'data-kind': kind }, h('span', { class: 'muted' }, `${time(Date.now())} `), body));
    while (feed.children.length > 200) feed.lastChild.remove();
  }

  function connect(project) {
    close();
    if (!project) return;
    source = new EventSource(`/v1/live?projectId=${encodeURIComponent(project)}`);
    source.onopen = () => { state.textContent = 'Connected: new items appear here.'; state.dataset.state = 'open'; };
    source.onerror = () => { state.textContent = 'Disconnected; retrying…'; state.dataset.state = 'error'; };
    for (const kind of ['observation.created', 'summary.created', 'job.changed']) {
      source.addEventListener(kind, (ev) => {
        let data = {};
        try { data = JSON.parse(ev.data); } catch { /* keep the empty object */ }
        add(kind, data);
      });
    }
  }

  const picker = await projectPicker(ctx, connect);
  mount(main, h('h1', {}, 'Live'), picker, state, feed, notice('Only events from now on are shown.'));
}
