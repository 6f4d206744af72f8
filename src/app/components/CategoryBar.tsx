// A stacked bar of mask-category shares, drawn as plain SVG. The title and the accessible label
// carry the numbers, so the chart is readable without colour.
import type { MaskCategory } from '../../core/masking/index.ts';
import { CATEGORY_LABEL, categoryColor, MASK_CATEGORIES, pct } from './categories.ts';

export function CategoryBar({
  shares,
  width = 240,
  height = 14,
  label,
}: {
  shares: Record<MaskCategory, number>;
  width?: number | string;
  height?: number;
  label?: string;
}) {
  let x = 0;
  const parts = MASK_CATEGORIES.filter((c) => shares[c] > 0);
  const text = parts.map((c) => `${CATEGORY_LABEL[c]} ${pct(shares[c])}`).join(', ') || 'no turns';
  return (
    <svg
      className="catbar"
      width={width}
      height={height}
      viewBox="0 0 100 10"
      preserveAspectRatio="none"
      role="img"
      aria-label={label ? `${label}: ${text}` : text}
    >
      <title>{text}</title>
      <rect x={0} y={0} width={100} height={10} fill="var(--off-bg)" />
      {parts.map((c) => {
        const w = shares[c] * 100;
        const r = <rect key={c} x={x} y={0} width={w} height={10} fill={categoryColor(c)} data-category={c} />;
        x += w;
        return r;
      })}
    </svg>
  );
}

export function CategoryLegend({ counts }: { counts?: Record<MaskCategory, number> }) {
  return (
    <ul className="legend" aria-label="Mask categories">
      {MASK_CATEGORIES.map((c) => (
        <li key={c}>
          <span className="swatch" style={{ background: categoryColor(c) }} aria-hidden="true" />
          {CATEGORY_LABEL[c]}
          {counts ? <span className="muted"> {counts[c]}</span> : null}
        </li>
      ))}
    </ul>
  );
}

export function CategoryBadge({ category }: { category: MaskCategory }) {
  return (
    <span className={`badge cat-${category}`} data-testid="category-badge" data-category={category}>
      {CATEGORY_LABEL[category]}
    </span>
  );
}
