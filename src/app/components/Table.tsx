// Tables as the views write them: a box that scrolls sideways on a narrow screen, a row of column
// headings, then the rows the view renders.
import type { ReactNode } from 'react';

/** A column heading: its text, or its content with a class (`num` aligns right), a tooltip and a key. */
export type Column = string | { label: ReactNode; className?: string; title?: string; key?: string };

/** The last column of a table of items: their buttons, named for screen readers only. */
export const ACTIONS_COLUMN: Column = { label: <span className="sr-only">Actions</span>, key: 'actions' };

export function TableHead({ columns }: { columns: Column[] }) {
  return (
    <thead>
      <tr>
        {columns.map((c, i) => {
          const col = typeof c === 'string' ? { label: c } : c;
          return (
            <th scope="col" key={col.key ?? i} className={col.className} title={col.title}>
              {col.label}
            </th>
          );
        })}
      </tr>
    </thead>
  );
}

export function ScrollTable({
  className = 'table',
  testId,
  caption,
  columns,
  children,
}: {
  className?: string;
  testId?: string;
  /** Read by screen readers only. */
  caption?: string;
  columns: Column[];
  children: ReactNode;
}) {
  return (
    <div className="table-scroll">
      <table className={className} data-testid={testId}>
        {caption ? <caption className="sr-only">{caption}</caption> : null}
        <TableHead columns={columns} />
        <tbody>{children}</tbody>
      </table>
    </div>
  );
}
