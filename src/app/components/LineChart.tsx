// A small line chart in plain SVG: a few series over training steps, optional horizontal
// reference lines (a baseline) and vertical markers (where a run was resumed). It scales to its
// container's width through the viewBox; text stays legible because the box is not too wide.
import { useId } from 'react';

export interface ChartSeries {
  name: string;
  points: [number, number][];
  /** CSS class for the stroke colour (chart-s0 … chart-s3). */
  className: string;
  /** Draw a dot at each point (sparse series such as eval loss). */
  dots?: boolean;
}

export interface ChartProps {
  title: string;
  series: ChartSeries[];
  /** Horizontal reference lines, e.g. the unigram baseline. */
  references?: { name: string; y: number; className: string }[];
  /** Vertical markers, e.g. "resumed at step 4". */
  markers?: { x: number; label: string }[];
  /** The x range to show (steps); defaults to the data's. */
  xMax?: number;
  /** A fixed y range (a share in percent: 0 to 100), for data that always lies in it; defaults to the data's. */
  yFixed?: [number, number];
  testId?: string;
}

const W = 560;
const H = 220;
const PAD = { left: 48, right: 14, top: 12, bottom: 30 };

function niceTicks(lo: number, hi: number, count: number): number[] {
  if (!(hi > lo)) return [lo];
  const raw = (hi - lo) / count;
  const mag = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 2.5, 5, 10].map((m) => m * mag).find((s) => s >= raw) ?? raw;
  const out: number[] = [];
  for (let v = Math.ceil(lo / step) * step; v <= hi + step * 1e-9; v += step) out.push(Number(v.toPrecision(12)));
  return out;
}

function fmt(v: number): string {
  const a = Math.abs(v);
  if (a === 0) return '0';
  if (a >= 1000) return v.toFixed(0);
  if (a >= 10) return v.toFixed(1);
  if (a >= 0.01) return v.toFixed(2);
  return v.toExponential(0);
}

/** Head- and footroom around the data, as a share of its range, so no line runs along the frame. */
const Y_MARGIN = 0.06;
/** About this many gridlines up the side and step labels along the bottom (niceTicks rounds them). */
const Y_TICKS = 4;
const X_TICKS = 5;

/** The y range to draw: every finite point and reference line, a flat series opened to a unit range, plus the margin. */
function yRange(points: [number, number][], references: { y: number }[]): [number, number] {
  const ys = [...points.map(([, y]) => y), ...references.map((r) => r.y).filter(Number.isFinite)];
  let y0 = ys.length ? Math.min(...ys) : 0;
  let y1 = ys.length ? Math.max(...ys) : 1;
  if (y1 - y0 < 1e-9) {
    y0 -= 0.5;
    y1 += 0.5;
  }
  const margin = (y1 - y0) * Y_MARGIN;
  return [y0 - margin, y1 + margin];
}

/** What the chart shows, for screen readers: each series' size and latest value. */
function describe(series: ChartSeries[]): string {
  return series
    .filter((s) => s.points.length)
    .map((s) => `${s.name}: ${s.points.length} points, latest ${fmt(s.points.at(-1)![1])} at step ${s.points.at(-1)![0]}`)
    .join('; ');
}

function Legend({ series, references }: { series: ChartSeries[]; references: { name: string; className: string }[] }) {
  return (
    <figcaption>
      <ul className="legend">
        {series.map((s) => (
          <li key={s.name}>
            <span className={`chart-key ${s.className}`} aria-hidden="true" />
            {s.name}
          </li>
        ))}
        {references.map((r) => (
          <li key={r.name}>
            <span className={`chart-key dashed ${r.className}`} aria-hidden="true" />
            {r.name}
          </li>
        ))}
      </ul>
    </figcaption>
  );
}

export function LineChart({ title, series, references = [], markers = [], xMax, yFixed, testId }: ChartProps) {
  const id = useId();
  const all = series.flatMap((s) => s.points).filter(([, y]) => Number.isFinite(y));
  const x1 = Math.max(xMax ?? 0, ...all.map(([x]) => x), 1);
  const [y0, y1] = yFixed ?? yRange(all, references);
  const sx = (x: number) => PAD.left + (x / x1) * (W - PAD.left - PAD.right);
  const sy = (y: number) => PAD.top + (1 - (y - y0) / (y1 - y0)) * (H - PAD.top - PAD.bottom);
  const path = (pts: [number, number][]) =>
    pts
      .filter(([, y]) => Number.isFinite(y))
      .map(([x, y], i) => `${i ? 'L' : 'M'}${sx(x).toFixed(1)},${sy(y).toFixed(1)}`)
      .join('');
  const summary = describe(series);
  return (
    <figure className="chart" data-testid={testId}>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-t ${id}-d`}>
        <title id={`${id}-t`}>{title}</title>
        <desc id={`${id}-d`}>{summary || 'No data yet.'}</desc>
        {niceTicks(y0, y1, Y_TICKS).map((t) => (
          <g key={`y${t}`} className="chart-grid">
            <line x1={PAD.left} x2={W - PAD.right} y1={sy(t)} y2={sy(t)} />
            <text x={PAD.left - 6} y={sy(t)} textAnchor="end" dominantBaseline="middle">
              {fmt(t)}
            </text>
          </g>
        ))}
        {niceTicks(0, x1, X_TICKS).map((t) => (
          <text key={`x${t}`} className="chart-tick" x={sx(t)} y={H - PAD.bottom + 16} textAnchor="middle">
            {t}
          </text>
        ))}
        <text className="chart-tick" x={W - PAD.right} y={H - 2} textAnchor="end">
          step
        </text>
        {markers.map((m) => (
          <g key={`m${m.x}`} className="chart-marker">
            <line x1={sx(m.x)} x2={sx(m.x)} y1={PAD.top} y2={H - PAD.bottom} />
            <text x={sx(m.x) + 4} y={PAD.top + 10}>
              {m.label}
            </text>
          </g>
        ))}
        {references
          .filter((r) => Number.isFinite(r.y))
          .map((r) => (
            <line key={r.name} className={`chart-ref ${r.className}`} x1={PAD.left} x2={W - PAD.right} y1={sy(r.y)} y2={sy(r.y)} />
          ))}
        {series.map((s) => (
          <g key={s.name} className={s.className}>
            <path className="chart-line" d={path(s.points)} />
            {s.dots || s.points.length === 1
              ? s.points.filter(([, y]) => Number.isFinite(y)).map(([x, y]) => <circle key={x} cx={sx(x)} cy={sy(y)} r={3} />)
              : null}
          </g>
        ))}
      </svg>
      <Legend series={series} references={references} />
    </figure>
  );
}
