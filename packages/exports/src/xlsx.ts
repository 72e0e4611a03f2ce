import ExcelJS from 'exceljs';
import { type ExportRow, type TabularExportOptions, rowEncoder } from './rows';
import { guardOutput, needsDrain, waitForDrain, yieldToEventLoop } from './stream';

/** Name of the one worksheet of an xlsx export. */
export const XLSX_SHEET_NAME = 'results';

/** Rows committed between two backpressure checks. */
const XLSX_ROWS_PER_CHECK = 200;

/** The part of a Writable's state the writer reads (also present on readable-stream 2.x). */
interface WritableInternals {
  _writableState?: { needDrain?: boolean; length?: number };
}

/**
 * exceljs hands each worksheet's XML to its zip archiver through an internal buffer stream
 * that forwards data to the archiver's input (a readable-stream PassThrough) without
 * looking at write()'s result. That input is where a backlog of uncompressed XML shows,
 * so the writer waits for it to drain. Returns null if exceljs's internals ever change
 * shape; then the writer still yields to the event loop and waits for `out`.
 */
function sheetZipInput(sheet: ExcelJS.Worksheet): (NodeJS.WritableStream & WritableInternals) | null {
  const buffer = (sheet as unknown as { stream?: { pipes?: unknown[] } }).stream;
  const input = buffer?.pipes?.[0] as (NodeJS.WritableStream & WritableInternals) | undefined;
  if (typeof input?.write === 'function' && typeof input._writableState === 'object') return input;
  return null;
}

function zipInputFull(input: WritableInternals | null): boolean {
  return input?._writableState?.needDrain === true;
}

/**
 * Streams an xlsx export to `out` with exceljs's streaming WorkbookWriter (no styles, inline
 * strings): a header row, then one committed row per export row. Every XLSX_ROWS_PER_CHECK
 * rows it yields to the event loop and waits while the archiver's input or `out` is full,
 * so neither uncompressed XML nor compressed output piles up in memory. The workbook ends
 * `out`; resolves with the number of data rows once `out` has finished. If `source` throws,
 * the promise rejects and `out` is left open for the caller to destroy. Strings are
 * written as inline XML text, so a spreadsheet reads a carriage return in a cell as LF.
 */
export async function writeXlsx(
  source: AsyncIterable<ExportRow[]>,
  out: NodeJS.WritableStream,
  options: TabularExportOptions,
): Promise<number> {
  const encoder = rowEncoder(options);
  const workbook = new ExcelJS.stream.xlsx.WorkbookWriter({
    stream: out as unknown as import('stream').Stream,
    useStyles: false,
    useSharedStrings: false,
  });
  const sheet = workbook.addWorksheet(XLSX_SHEET_NAME);
  sheet.addRow(encoder.header).commit();
  const zipInput = sheetZipInput(sheet);
  let count = 0;
  let sinceCheck = 0;
  for await (const page of source) {
    for (const row of page) {
      sheet.addRow(encoder.encode(row)).commit();
      count += 1;
      if (++sinceCheck >= XLSX_ROWS_PER_CHECK) {
        sinceCheck = 0;
        await yieldToEventLoop();
        while (zipInput !== null && zipInputFull(zipInput)) await waitForDrain(zipInput, [out]);
        while (needsDrain(out)) await waitForDrain(out);
      }
    }
  }
  sheet.commit();
  await guardOutput(out, workbook.commit());
  return count;
}
