import type { Cell } from './columns';
import { type ExportRow, type TabularExportOptions, rowEncoder } from './rows';
import { pipeTo } from './stream';

/** Record separator of csv exports (RFC 4180). */
export const CSV_NEWLINE = '\r\n';

const QUOTE = /"/g;

/**
 * Every text field is enclosed in double quotes (extensions-2.md 2 and 6), the header's too;
 * numbers and booleans stay bare, and null is an empty bare field. A reader that splits on `;`
 * or a tab (spreadsheets in many locales) then never starts a cell inside a text field, so the
 * formula guard (cells.ts), which looks at the start of each field, cannot be stepped around.
 */
function encodeCell(cell: Cell): string {
  if (cell === null) return '';
  if (typeof cell !== 'string') return String(cell);
  return `"${cell.indexOf('"') < 0 ? cell : cell.replace(QUOTE, '""')}"`;
}

/**
 * One csv record without its terminator, quoted as RFC 4180 asks, every text field enclosed.
 * The output is the same as papaparse's `unparse` with `quotes` set for strings (the tests check
 * this on arbitrary cells); a hand-rolled encoder because this loop is the export's hot path.
 */
export function encodeCsvRecord(cells: readonly Cell[]): string {
  const fields = new Array<string>(cells.length);
  for (let i = 0; i < cells.length; i++) fields[i] = encodeCell(cells[i]);
  return fields.join(',');
}

/** Characters buffered before one write: a slow reader's export holds about this much text. */
const CSV_CHUNK_CHARS = 16 * 1024;

/**
 * Streams a csv export (UTF-8 without BOM, CRLF after every record, RFC 4180 quoting with
 * every text field enclosed) to
 * `out`: the header once, then one record per row, in chunks of about CSV_CHUNK_CHARS
 * characters piped to `out` with backpressure (stream.pipeline: the next chunk is built only
 * once `out` has taken the last). Ends `out` and resolves with the number of data rows once it
 * has finished. If `source` throws or `out` closes early, the promise rejects and `out` is
 * destroyed.
 */
export async function writeCsv(
  source: AsyncIterable<ExportRow[]>,
  out: NodeJS.WritableStream,
  options: TabularExportOptions,
): Promise<number> {
  const encoder = rowEncoder(options);
  let count = 0;
  async function* chunks(): AsyncGenerator<string> {
    let pending: string[] = [encodeCsvRecord(encoder.header)];
    let pendingChars = 0;
    for await (const page of source) {
      for (const row of page) {
        const record = encodeCsvRecord(encoder.encode(row));
        pending.push(record);
        pendingChars += record.length + 2;
        count += 1;
        if (pendingChars >= CSV_CHUNK_CHARS) {
          yield pending.join(CSV_NEWLINE) + CSV_NEWLINE;
          pending = [];
          pendingChars = 0;
        }
      }
    }
    if (pending.length > 0) yield pending.join(CSV_NEWLINE) + CSV_NEWLINE;
  }
  await pipeTo(chunks(), out);
  return count;
}
