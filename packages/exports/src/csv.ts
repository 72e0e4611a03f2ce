import type { Cell } from './columns';
import { type ExportRow, type TabularExportOptions, rowEncoder } from './rows';
import { pipeTo } from './stream';

/** Record separator of csv exports (RFC 4180). */
export const CSV_NEWLINE = '\r\n';

/** A cell is quoted when it holds a quote, comma, CR, LF or BOM, or starts or ends with a space. */
const SPECIAL = /[",\r\n\ufeff]/;
const QUOTE = /"/g;

function encodeCell(cell: Cell): string {
  if (cell === null) return '';
  if (typeof cell !== 'string') return String(cell);
  if (cell.length === 0) return cell;
  if (cell.charCodeAt(0) !== 0x20 && cell.charCodeAt(cell.length - 1) !== 0x20 && !SPECIAL.test(cell)) return cell;
  return `"${cell.indexOf('"') < 0 ? cell : cell.replace(QUOTE, '""')}"`;
}

/**
 * One csv record without its terminator, quoted as RFC 4180 asks. The output is the same
 * as papaparse's `unparse` with default quoting (the tests check this on arbitrary cells);
 * a hand-rolled encoder because this loop is the export's hot path.
 */
export function encodeCsvRecord(cells: readonly Cell[]): string {
  const fields = new Array<string>(cells.length);
  for (let i = 0; i < cells.length; i++) fields[i] = encodeCell(cells[i]);
  return fields.join(',');
}

/** Characters buffered before one write: a slow reader's export holds about this much text. */
const CSV_CHUNK_CHARS = 16 * 1024;

/**
 * Streams a csv export (UTF-8 without BOM, CRLF after every record, RFC 4180 quoting) to
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
