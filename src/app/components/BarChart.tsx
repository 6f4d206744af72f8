// A small grouped bar chart in plain SVG: one group per category (a domain, then overall), one
// bar per series (a backend) in the series' colour; a missing value leaves a gap. Scales to its
// container through the viewBox, like LineChart; the description lists every value for screen
// readers.
import { useId } from 'react';

export interface BarSeries {
  name: string;
  /** One value per category (null: none). */
  values: (number | null)[];
  /** CSS class for the fill colour (chart-s0 … chart-s5). */
  className: string;
  /** Drawn lighter, outlined (a reference row, such as a baseline). */
  muted?: boolean;
}

export interface BarChartProps {
  title: string;
  categories: string[];
  series: BarSeries[];
  /** The y range (default 0 … the largest value). */
  yMax?: number;
  unit?: string;
  testId?: string;
}

const W = 640;
const H = 230;
const PAD = { left: 40, right: 10, top: 12, bottom: 34 };

export function BarChart({ title, categories, series, yMax, unit = '', testId }: BarChartProps) {
  const id = useId();
  const top = yMax ?? Math.max(1, ...series.flatMap((s) => s.values.filter((v): v is number => v !== null && Number.isFinite(v))));
  const plotW = W - PAD.left - PAD.right;
  const plotH = H - PAD.top - PAD.bottom;
  const groupW = plotW / Math.max(1, categories.length);
  const barW = Math.max(2, (groupW * 0.8) / Math.max(1, series.length));
  const sy = (v: number) => PAD.top + (1 - Math.max(0, Math.min(v, top)) / top) * plotH;
  const ticks = [0, 0.25, 0.5, 0.75, 1].map((f) => f * top);
  const desc = series
    .map((s) => `${s.name}: ${categories.map((c, i) => `${c} ${s.values[i] === null ? 'none' : s.values[i]!.toFixed(2)}${unit}`).join(', ')}`)
    .join('; ');
  return (
    <figure className="chart bar-chart" data-testid={testId}>
      <svg viewBox={`0 0 ${W} ${H}`} role="img" aria-labelledby={`${id}-t ${id}-d`}>
        <title id={`${id}-t`}>{title}</title>
        <desc id={`${id}-d`}>{desc || 'No data yet.'}</desc>
        {ticks.map((t) => (
          <g key={t} className="chart-grid">
            <line x1={PAD.left} x2={W - PAD.right} y1={sy(t)} y2={sy(t)} />
            <text x={PAD.left - 6} y={sy(t)} textAnchor="end" dominantBaseline="middle">
              {Math.round(t)}
            </text>
          </g>
        ))}
        {categories.map((c, ci) => {
          const x0 = PAD.left + ci * groupW + groupW * 0.1;
          return (
            <g key={c}>
              {series.map((s, si) => {
                const v = s.values[ci];
                if (v === null || !Number.isFinite(v)) return null;
                const y = sy(v);
                return (
                  <rect
                    key={s.name}
                    className={`bar ${s.className}${s.muted ? ' muted' : ''}`}
                    x={x0 + si * barW}
                    y={y}
                    width={barW - 1}
                    height={Math.max(0, PAD.top + plotH - y)}
                  >
                    <title>{`${s.name} · ${c}: ${v.toFixed(2)}${unit}`}</title>
                  </rect>
                );
              })}
              <text x={PAD.left + ci * groupW + groupW / 2} y={H - PAD.bottom + 16} textAnchor="middle">
                {c}
              </text>
            </g>
          );
        })}
      </svg>
      <figcaption>
        <ul className="legend">
          {series.map((s) => (
            <li key={s.name}>
              <span className={`bar-key ${s.className}${s.muted ? ' muted' : ''}`} aria-hidden="true" />
              {s.name}
            </li>
          ))}
        </ul>
      </figcaption>
    </figure>
  );
}
