// Small SVG charts (no library): a sparkline per group and line charts over the samples the
// server keeps. Gaps (null) break a line instead of pretending to be zero.
const SVG = 'http://www.w3.org/2000/svg';

function svg(tag, attributes = {}, text) {
  const node = document.createElementNS(SVG, tag);
  for (const [name, value] of Object.entries(attributes)) node.setAttribute(name, String(value));
  if (text !== undefined) node.textContent = text;
  return node;
}

/** "M x y L x y …" with a new M after every gap. */
function pathOf(points) {
  let d = '';
  let drawing = false;
  for (const point of points) {
    if (point === null) {
      drawing = false;
      continue;
    }
    d += `${drawing ? 'L' : 'M'}${point[0].toFixed(1)} ${point[1].toFixed(1)} `;
    drawing = true;
  }
  return d.trim();
}

const maxOf = (lists) => {
  let max = 0;
  for (const list of lists) for (const v of list) if (v !== null && v > max) max = v;
  return max;
};

export function sparkline(values, { width = 140, height = 26, title = '' } = {}) {
  const root = svg('svg', {
    class: 'spark',
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': title || 'sparkline',
  });
  if (title) root.append(svg('title', {}, title));
  const max = maxOf([values]) || 1;
  const step = values.length > 1 ? width / (values.length - 1) : 0;
  const points = values.map((v, i) =>
    v === null ? null : [i * step, height - 2 - (v / max) * (height - 4)],
  );
  root.append(svg('path', { d: pathOf(points), class: 'line' }));
  return root;
}

/**
 * A line chart filling `container`. series: [{ label, values, className }], values aligned with
 * `times` (ms); format(value) labels the y axis; `title` names the chart, and its name for
 * screen readers also gives each series' latest value.
 */
export function lineChart(container, { times, series, format, title }) {
  const width = Math.max(container.clientWidth || 0, 280);
  const height = 170;
  const pad = { left: 64, right: 10, top: 10, bottom: 22 };
  const latest = series
    .map((s) => {
      const value = s.values.findLast((v) => v !== null && v !== undefined);
      return `${s.label} ${value === undefined ? 'none yet' : format(value)}`;
    })
    .join(', ');
  const name = `${title}: latest ${latest}`;
  const root = svg('svg', {
    width,
    height,
    viewBox: `0 0 ${width} ${height}`,
    role: 'img',
    'aria-label': name,
  });
  root.append(svg('title', {}, name));
  const plotW = width - pad.left - pad.right;
  const plotH = height - pad.top - pad.bottom;
  const max = maxOf(series.map((s) => s.values)) || 1;
  const y = (v) => pad.top + plotH - (v / max) * plotH;
  const first = times[0] ?? 0;
  const span = Math.max((times[times.length - 1] ?? 0) - first, 1);
  const x = (t) => pad.left + ((t - first) / span) * plotW;
  for (const fraction of [0, 0.5, 1]) {
    const value = max * fraction;
    root.append(
      svg('line', {
        x1: pad.left,
        x2: width - pad.right,
        y1: y(value),
        y2: y(value),
        class: 'grid',
      }),
      svg(
        'text',
        { x: pad.left - 6, y: y(value) + 4, class: 'axis', 'text-anchor': 'end' },
        format(value),
      ),
    );
  }
  if (times.length > 0) {
    const ago = Math.round(span / 60_000);
    root.append(
      svg(
        'text',
        { x: pad.left, y: height - 6, class: 'axis' },
        ago >= 1 ? `${ago} min ago` : `${Math.round(span / 1000)} s ago`,
      ),
      svg(
        'text',
        { x: width - pad.right, y: height - 6, class: 'axis', 'text-anchor': 'end' },
        'now',
      ),
    );
  }
  let legendX = pad.left + 8;
  for (const s of series) {
    const points = s.values.map((v, i) => (v === null ? null : [x(times[i]), y(v)]));
    root.append(svg('path', { d: pathOf(points), class: `line ${s.className}` }));
    root.append(
      svg('text', { x: legendX, y: pad.top + 12, class: `legend ${s.className}` }, s.label),
    );
    legendX += 12 + s.label.length * 7;
  }
  container.replaceChildren(root);
}
