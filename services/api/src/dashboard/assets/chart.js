// Small inline-SVG charts (no library): daily bars against a budget line.

import { h, s } from './dom.js';

/** Bars of `values` ({label, value}) with an optional horizontal `budget` line. */
export function barChart(title, values, budget) {
  const width = 640;
  const height = 220;
  const pad = { top: 16, right: 8, bottom: 28, left: 56 };
  const max = Math.max(1, budget || 0, ...values.map((v) => v.value));
  const innerW = width - pad.left - pad.right;
  const innerH = height - pad.top - pad.bottom;
  const step = innerW / Math.max(1, values.length);
  const y = (v) => pad.top + innerH - (v / max) * innerH;
  const fmt = (n) => (n >= 1e6 ? `${(n / 1e6).toFixed(1)}M` : n >= 1e3 ? `${(n / 1e3).toFixed(1)}k` : String(n));
  const svg = s('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title, class: 'chart' },
    s('title', {}, title),
    s('line', { x1: pad.left, x2: width - pad.right, y1: y(0), y2: y(0), class: 'axis' }),
    s('text', { x: pad.left - 6, y: y(max) + 4, 'text-anchor': 'end', class: 'tick' }, fmt(max)),
    s('text', { x: pad.left - 6, y: y(0) + 4, 'text-anchor': 'end', class: 'tick' }, '0'),
    values.map((v, i) => s('g', {},
      s('rect', { x: pad.left + i * step + step * 0.15, y: y(v.value), width: step * 0.7, height: Math.max(0, y(0) - y(v.value)), class: budget && v.value > budget ? 'bar over' : 'bar' },
        s('title', {}, `${v.label}: ${v.value}`)),
      (values.length <= 14 || i % Math.ceil(values.length / 10) === 0)
        ? s('text', { x: pad.left + i * step + step / 2, y: height - 8, 'text-anchor': 'middle', class: 'tick' }, v.label.slice(5))
        : null)),
    budget ? [s('line', { x1: pad.left, x2: width - pad.right, y1: y(budget), y2: y(budget), class: 'budget' }),
      s('text', { x: width - pad.right, y: y(budget) - 4, 'text-anchor': 'end', class: 'tick' }, `budget ${fmt(budget)}`)] : null);
  return h('figure', { class: 'chart-box' }, svg, h('figcaption', {}, title));
}

/** A sparkline-style bar row for per-minute counts. */
export function miniBars(title, values) {
  const width = 300;
  const height = 60;
  const max = Math.max(1, ...values.map((v) => v.value));
  const step = width / Math.max(1, values.length);
  return h('figure', { class: 'chart-box mini' },
    s('svg', { viewBox: `0 0 ${width} ${height}`, role: 'img', 'aria-label': title, class: 'chart' },
      s('title', {}, title),
      values.map((v, i) => s('rect', { x: i * step + 1, y: height - (v.value / max) * (height - 4), width: Math.max(1, step - 2), height: (v.value / max) * (height - 4), class: 'bar' },
        s('title', {}, `${v.label}: ${v.value}`)))),
    h('figcaption', {}, title));
}
