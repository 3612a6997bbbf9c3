// Building DOM nodes without innerHTML: every string is text, never markup.

function append(el, children) {
  for (const c of children.flat(Infinity)) {
    if (c == null || c === false) continue;
    el.append(c instanceof Node ? c : String(c));
  }
}

/** h('a', {href: '#/x', onclick: f}, 'text', child…) */
export function h(tag, attrs, ...children) {
  const el = document.createElement(tag);
  for (const [k, v] of Object.entries(attrs || {})) {
    if (v == null || v === false) continue;
    if (k.startsWith('on') && typeof v === 'function') el.addEventListener(k.slice(2), v);
    else if (k === 'class') el.className = v;
    else if (k === 'value') el.value = v;
    else if (k === 'checked') el.checked = !!v;
    else el.setAttribute(k, v === true ? '' : String(v));
  }
  append(el, children);
  return el;
}

/** An SVG element (charts). */
export function s(tag, attrs, ...children) {
  const el = document.createElementNS('http://www.w3.org/2000/svg', tag);
  for (const [k, v] of Object.entries(attrs || {})) if (v != null) el.setAttribute(k, String(v));
  append(el, children);
  return el;
}

/** Runs `work` (a promise or a function returning one) with the view it
 * belongs to marked `aria-busy` until it, and any other work of that view,
 * has finished. With `data-loaded` (app.js) this is how the page says it
 * has settled: the tests wait on both. */
const inFlight = new WeakMap();
export async function busy(work, view = document.getElementById('view')) {
  if (!view) return typeof work === 'function' ? work() : work;
  inFlight.set(view, (inFlight.get(view) || 0) + 1);
  view.setAttribute('aria-busy', 'true');
  try {
    return await (typeof work === 'function' ? work() : work);
  } finally {
    const left = inFlight.get(view) - 1;
    inFlight.set(view, left);
    if (!left) view.setAttribute('aria-busy', 'false');
  }
}

export function mount(target, ...children) {
  target.replaceChildren();
  append(target, children);
}

export function time(ms) {
  if (ms == null) return '—';
  const d = new Date(typeof ms === 'string' ? ms : Number(ms));
  return Number.isNaN(d.getTime()) ? String(ms) : d.toLocaleString();
}

export function notice(text, kind = 'info') {
  return h('p', { class: `notice ${kind}`, role: kind === 'error' ? 'alert' : 'status' }, text);
}

/** A table: columns [{label, cell: row => node|string}], inside a scrolling wrapper. */
export function table(caption, columns, rows, empty = 'Nothing yet.') {
  if (!rows.length) return notice(empty);
  return h('div', { class: 'table-wrap' },
    h('table', {},
      h('caption', {}, caption),
      h('thead', {}, h('tr', {}, columns.map((c) => h('th', { scope: 'col' }, c.label)))),
      h('tbody', {}, rows.map((r) => h('tr', {}, columns.map((c) => h('td', { 'data-label': c.label }, c.cell(r))))))));
}

/** A labelled form field. */
export function field(label, input, hint) {
  const id = input.id || `f-${Math.random().toString(36).slice(2, 9)}`;
  input.id = id;
  return h('div', { class: 'field' }, h('label', { for: id }, label), input, hint ? h('small', {}, hint) : null);
}

/** A form whose submit runs `action(data)` and shows its error in place. */
export function form(attrs, children, action) {
  const status = h('div', { class: 'form-status', 'aria-live': 'polite' });
  const el = h('form', attrs, children, status);
  el.addEventListener('submit', async (ev) => {
    ev.preventDefault();
    status.replaceChildren();
    const button = el.querySelector('button[type=submit]');
    if (button) button.disabled = true;
    try {
      await busy(() => action(new FormData(el), status), el.closest('.view') || undefined);
    } catch (e) {
      status.replaceChildren(notice(e.message || String(e), 'error'));
    } finally {
      if (button) button.disabled = false;
    }
  });
  return el;
}

/** A button that asks to be pressed twice before it acts (no modal dialogs). */
export function confirmButton(label, confirmLabel, action) {
  let armed = false;
  const b = h('button', { type: 'button', class: 'danger' }, label);
  b.addEventListener('click', async () => {
    if (!armed) {
      armed = true;
      b.textContent = confirmLabel;
      return;
    }
    b.disabled = true;
    try {
      await busy(() => action(b), b.closest('.view') || undefined);
    } catch (e) {
      b.replaceWith(notice(e.message || String(e), 'error'));
    }
  });
  b.addEventListener('blur', () => {
    if (armed && !b.disabled) { armed = false; b.textContent = label; }
  });
  return b;
}
