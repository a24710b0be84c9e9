import type { ComponentChildren } from "preact";

export interface Column<R> {
  label: ComponentChildren;
  cell(row: R): ComponentChildren;
  /** Right-aligned, tabular figures. */
  numeric?: boolean;
  /** This column names the row (<th scope="row">). */
  rowHeader?: boolean;
  /** A class for the cell, e.g. to flag it. */
  className?(row: R): string | undefined;
  testId?(row: R): string | undefined;
}

interface Props<R> {
  caption: ComponentChildren;
  columns: Column<R>[];
  rows: R[];
  rowKey(row: R, index: number): string;
  /** Shown in one cell when there are no rows. */
  empty?: ComponentChildren;
  /** A footer row (e.g. totals), one cell per column. */
  footer?: ComponentChildren[];
  testId?: string;
  /** The table's id, e.g. for a chart's aria-details (the chart's table alternative). */
  id?: string;
  className?: string;
}

/** A captioned table with column headers (and row headers where a column names the row). */
export function DataTable<R>({
  caption,
  columns,
  rows,
  rowKey,
  empty,
  footer,
  testId,
  id,
  className,
}: Props<R>) {
  return (
    <div class="table-wrap">
      <table class={className ? `data ${className}` : "data"} data-testid={testId} id={id}>
        <caption>{caption}</caption>
        <thead>
          <tr>
            {columns.map((c, i) => (
              <th scope="col" class={c.numeric ? "num" : undefined} key={String(i)}>
                {c.label}
              </th>
            ))}
          </tr>
        </thead>
        <tbody>
          {rows.length === 0 ? (
            <tr>
              <td class="empty" colSpan={columns.length}>
                {empty ?? "Nothing in this range."}
              </td>
            </tr>
          ) : (
            rows.map((row, r) => (
              <tr key={rowKey(row, r)}>
                {columns.map((c, i) => {
                  const cls = [c.numeric ? "num" : "", c.className?.(row) ?? ""].filter(Boolean).join(" ");
                  const props = { class: cls || undefined, "data-testid": c.testId?.(row) };
                  return c.rowHeader ? (
                    <th scope="row" {...props} key={String(i)}>
                      {c.cell(row)}
                    </th>
                  ) : (
                    <td {...props} key={String(i)}>
                      {c.cell(row)}
                    </td>
                  );
                })}
              </tr>
            ))
          )}
        </tbody>
        {footer && rows.length > 0 ? (
          <tfoot>
            <tr>
              {footer.map((cell, i) =>
                i === 0 ? (
                  <th scope="row" key={String(i)}>
                    {cell}
                  </th>
                ) : (
                  <td class={columns[i]?.numeric ? "num" : undefined} key={String(i)}>
                    {cell}
                  </td>
                ),
              )}
            </tr>
          </tfoot>
        ) : null}
      </table>
    </div>
  );
}
