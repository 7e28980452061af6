/**
 * The best-so-far curve of a log as SVG: per workload, GFLOPS against trials, one point
 * per valid record at the best found so far (class `al-point`), its own throughput as a
 * faint dot (`al-measured`), and failed trials as red ticks on the axis (`al-error`).
 */
import { append, el, fmtNum, svg } from './dom';
import { bestCurves, IRecord } from './records';

export const COLORS = ['#1c7ed6', '#e8590c', '#2f9e44', '#9c36b5', '#e03131', '#0c8599', '#f08c00'];

const W = 640;
const H = 260;
const PAD = { left: 52, right: 12, top: 12, bottom: 34 };

/** Nice round tick values from 0 to `max`. */
function ticks(max: number, n = 5): number[] {
  if (!(max > 0)) {
    return [0];
  }
  const raw = max / n;
  const mag = Math.pow(10, Math.floor(Math.log10(raw)));
  const step = [1, 2, 5, 10].map(m => m * mag).find(s => s >= raw) ?? raw;
  const out: number[] = [];
  // up to the first tick at or above max, so the highest point stays inside the chart
  for (let k = 0; k <= Math.ceil(max / step - 1e-9); k++) {
    out.push(+(k * step).toPrecision(6));
  }
  return out;
}

/** The chart, with a legend naming each workload (`onPick` is called with a clicked point's record). */
export function curveChart(
  records: IRecord[],
  workloadLabel: (w: string) => string,
  onPick: (r: IRecord) => void,
  selected?: IRecord
): HTMLElement {
  const box = el('div', 'al-curve');
  const curves = bestCurves(records);
  const maxTrial = Math.max(1, ...records.map(r => r.trial));
  const maxY = Math.max(1e-9, ...records.map(r => (Number.isFinite(r.gflops) ? r.gflops : 0)));
  const yTicks = ticks(maxY * 1.05);
  const yTop = yTicks[yTicks.length - 1] || 1;
  const x = (t: number): number =>
    PAD.left + ((t - 1) / Math.max(1, maxTrial - 1)) * (W - PAD.left - PAD.right);
  const y = (g: number): number => H - PAD.bottom - (g / yTop) * (H - PAD.top - PAD.bottom);
  const chart = svg('svg', { viewBox: `0 0 ${W} ${H}`, width: W, height: H, class: 'al-chart' });
  for (const v of yTicks) {
    append(
      chart,
      svg('line', { x1: PAD.left, x2: W - PAD.right, y1: y(v), y2: y(v), class: 'al-grid' })
    );
    const label = svg('text', { x: PAD.left - 6, y: y(v) + 4, 'text-anchor': 'end', class: 'al-tick' });
    label.textContent = fmtNum(v, 3);
    chart.appendChild(label);
  }
  for (const t of [1, ...ticks(maxTrial, 6)].filter((t, i, a) => t >= 1 && t <= maxTrial && Number.isInteger(t) && a.indexOf(t) === i)) {
    const label = svg('text', { x: x(t), y: H - PAD.bottom + 14, 'text-anchor': 'middle', class: 'al-tick' });
    label.textContent = String(t);
    chart.appendChild(label);
  }
  const xTitle = svg('text', { x: (W + PAD.left) / 2, y: H - 4, 'text-anchor': 'middle', class: 'al-axis-title' });
  xTitle.textContent = 'trial';
  const yTitle = svg('text', {
    x: 12,
    y: (H - PAD.bottom) / 2,
    transform: `rotate(-90 12 ${(H - PAD.bottom) / 2})`,
    'text-anchor': 'middle',
    class: 'al-axis-title'
  });
  yTitle.textContent = 'best GFLOPS';
  append(chart, xTitle, yTitle);
  const legend = el('div', 'al-legend');
  let k = 0;
  for (const [workload, points] of curves) {
    const color = COLORS[k++ % COLORS.length];
    const group = svg('g', { class: 'al-series' });
    group.dataset.workload = workload;
    if (points.length) {
      let d = `M${x(points[0].trial)} ${y(points[0].best)}`;
      for (const p of points.slice(1)) {
        d += ` H${x(p.trial)} V${y(p.best)}`;
      }
      append(group, svg('path', { d, fill: 'none', stroke: color, 'stroke-width': 2, class: 'al-line' }));
    }
    for (const p of points) {
      const dot = svg('circle', { cx: x(p.trial), cy: y(p.gflops), r: 2.5, fill: color, opacity: 0.3, class: 'al-measured' });
      const pt = svg('circle', {
        cx: x(p.trial),
        cy: y(p.best),
        r: p.record === selected ? 5 : 3.5,
        fill: color,
        class: p.record === selected ? 'al-point al-selected' : 'al-point'
      });
      const title = svg('title');
      title.textContent = `trial ${p.trial}: ${fmtNum(p.gflops)} GFLOPS (best ${fmtNum(p.best)})`;
      pt.appendChild(title);
      pt.addEventListener('click', () => onPick(p.record));
      append(group, dot, pt);
    }
    for (const r of records) {
      if (r.workload === workload && !Number.isFinite(r.gflops)) {
        const tick = svg('line', {
          x1: x(r.trial),
          x2: x(r.trial),
          y1: H - PAD.bottom,
          y2: H - PAD.bottom - 6,
          stroke: '#e03131',
          'stroke-width': 2,
          class: 'al-error'
        });
        const title = svg('title');
        title.textContent = `trial ${r.trial}: ${r.errorKind}`;
        tick.appendChild(title);
        group.appendChild(tick);
      }
    }
    chart.appendChild(group);
    const item = el('span', 'al-legend-item');
    const swatch = el('span', 'al-swatch');
    swatch.style.background = color;
    const best = points.length ? points[points.length - 1].best : NaN;
    append(item, swatch, el('span', 'al-legend-name', workloadLabel(workload)));
    item.appendChild(el('span', 'al-legend-best', ` best ${fmtNum(best)} GFLOPS · ${points.length} valid`));
    item.title = workload;
    legend.appendChild(item);
  }
  return append(box, chart, legend);
}
