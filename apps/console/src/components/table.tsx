import { type ColumnDef, flexRender, getCoreRowModel, getSortedRowModel, type SortingState, useReactTable } from '@tanstack/react-table';
import { useState } from 'react';

/**
 * A table of TanStack Table: sortable by its headers (buttons, so the keyboard sorts too), and
 * scrolling sideways inside its own box on a narrow screen instead of widening the page.
 */
export function DataTable<T>({
  data,
  columns,
  caption,
  empty,
  testId,
}: {
  data: T[];
  columns: ColumnDef<T, unknown>[];
  caption: string;
  empty?: string;
  testId?: string;
}) {
  const [sorting, setSorting] = useState<SortingState>([]);
  const table = useReactTable({
    data,
    columns,
    state: { sorting },
    onSortingChange: setSorting,
    getCoreRowModel: getCoreRowModel(),
    getSortedRowModel: getSortedRowModel(),
  });
  if (data.length === 0)
    return (
      <p className="empty" data-testid={testId}>
        {empty ?? 'Nothing here yet.'}
      </p>
    );
  return (
    <div className="table-wrap" tabIndex={0} role="region" aria-label={caption}>
      <table data-testid={testId}>
        <caption className="visually-hidden">{caption}</caption>
        <thead>
          {table.getHeaderGroups().map((group) => (
            <tr key={group.id}>
              {group.headers.map((header) => {
                const sorted = header.column.getIsSorted();
                const label = flexRender(header.column.columnDef.header, header.getContext());
                return (
                  <th key={header.id} scope="col" aria-sort={sorted === 'asc' ? 'ascending' : sorted === 'desc' ? 'descending' : undefined}>
                    {header.column.getCanSort() && header.column.columnDef.enableSorting !== false ? (
                      <button type="button" className="sort" onClick={header.column.getToggleSortingHandler()}>
                        {label}
                        <span aria-hidden="true">{sorted === 'asc' ? ' ▲' : sorted === 'desc' ? ' ▼' : ''}</span>
                      </button>
                    ) : (
                      label
                    )}
                  </th>
                );
              })}
            </tr>
          ))}
        </thead>
        <tbody>
          {table.getRowModel().rows.map((row) => (
            <tr key={row.id}>
              {row.getVisibleCells().map((cell) => (
                <td key={cell.id} data-label={typeof cell.column.columnDef.header === 'string' ? cell.column.columnDef.header : undefined}>
                  {flexRender(cell.column.columnDef.cell, cell.getContext())}
                </td>
              ))}
            </tr>
          ))}
        </tbody>
      </table>
    </div>
  );
}
