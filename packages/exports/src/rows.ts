import type { ItemKind } from '@sdx/catalog';
import { neutraliseCell } from './cells';
import { type Cell, columnsFor, compileFlattener } from './columns';

/**
 * One export row: the leading context cells (batch exports: batch_id, job_id, target; job
 * exports: none) and one result item.
 */
export interface ExportRow {
  context?: Record<string, string | number | null>;
  item: unknown;
}

export interface TabularExportOptions {
  /** Leading columns taken from each row's context, in this order. */
  contextColumns: string[];
  /** Item kinds the export may contain; they fix the item columns (see columnsFor). */
  itemKinds: ItemKind[];
  /** Rows of context cells only, without item columns (a monitor's series: target, item_id, metric, at, value). */
  contextOnly?: boolean;
}

export interface RowEncoder {
  /** Header: context columns, then item columns. */
  header: string[];
  /** The cells of one row, formula-neutralised. */
  encode(row: ExportRow): Cell[];
}

/** Builds the fixed header and the row encoder shared by the csv and xlsx writers. */
export function rowEncoder(options: TabularExportOptions): RowEncoder {
  const contextColumns = [...options.contextColumns];
  const itemColumns = options.contextOnly ? [] : columnsFor(options.itemKinds);
  const flatten = options.contextOnly ? () => [] : compileFlattener(itemColumns);
  const header = [...contextColumns, ...itemColumns].map((c) => neutraliseCell(c));
  return {
    header,
    encode(row: ExportRow): Cell[] {
      const cells = flatten(row.item);
      const out: Cell[] = new Array<Cell>(contextColumns.length + cells.length);
      let i = 0;
      for (const column of contextColumns) {
        const value = row.context?.[column];
        out[i++] = value === undefined ? null : neutraliseCell(value);
      }
      for (const cell of cells) out[i++] = neutraliseCell(cell);
      return out;
    },
  };
}
