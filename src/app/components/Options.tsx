// The <option>s of a <select>, one per item, each keyed by its value.
import type { ReactNode } from 'react';

export function Options<T>({
  items,
  value = (item) => String(item),
  label = (item) => String(item),
}: {
  items: readonly T[];
  /** The option's value (and key); default: the item as a string. */
  value?: (item: T, index: number) => string;
  /** What the option shows; default: the item as a string. */
  label?: (item: T) => ReactNode;
}) {
  return (
    <>
      {items.map((item, i) => (
        <option key={value(item, i)} value={value(item, i)}>
          {label(item)}
        </option>
      ))}
    </>
  );
}
