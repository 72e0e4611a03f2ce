import type ExcelJS from 'exceljs';
import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { setImmediate as nextTurn } from 'node:timers/promises';
import { type ExportRow, type TabularExportOptions, rowEncoder } from './rows';
import { pipeTo } from './stream';

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
 * strings): a header row, then one committed row per export row. The workbook writes into a
 * PassThrough that stream.pipeline feeds to `out`, so errors and an early close of `out` reach
 * the writer. Every XLSX_ROWS_PER_CHECK rows it lets the event loop run and waits (events.once
 * 'drain') while the archiver's input or the PassThrough is full, so neither uncompressed XML
 * nor compressed output piles up in memory. Ends `out`; resolves with the number of data rows
 * once `out` has finished. If `source` throws or `out` closes early, the promise rejects and
 * `out` is destroyed. Strings are written as inline XML text, so a spreadsheet reads a
 * carriage return in a cell as LF.
 */
export async function writeXlsx(
  source: AsyncIterable<ExportRow[]>,
  out: NodeJS.WritableStream,
  options: TabularExportOptions,
): Promise<number> {
  const encoder = rowEncoder(options);
  // exceljs is loaded on the first xlsx export, not by every process that imports this package
  // (about 300 ms of CPU).
  const { default: Excel } = await import('exceljs');
  // The workbook writes its first bytes as soon as it has a sheet: the first page is read
  // before that, so a source that fails at once fails before the first byte.
  const pages = source[Symbol.asyncIterator]();
  let first: IteratorResult<ExportRow[]>;
  try {
    first = await pages.next();
  } catch (error) {
    (out as NodeJS.WritableStream & { destroy(): void }).destroy(); // as the pipeline below would
    throw error;
  }
  const body = new PassThrough();
  const delivered = pipeTo(body, out);
  // once delivery has failed, no 'drain' is coming: stop waiting for one
  const stopped = new AbortController();
  delivered.catch((error: unknown) => stopped.abort(error));
  const { signal } = stopped;
  try {
    const workbook = new Excel.stream.xlsx.WorkbookWriter({
      stream: body,
      useStyles: false,
      useSharedStrings: false,
    });
    const sheet = workbook.addWorksheet(XLSX_SHEET_NAME);
    sheet.addRow(encoder.header).commit();
    const zipInput = sheetZipInput(sheet);
    let count = 0;
    let sinceCheck = 0;
    for await (const page of resumed(first, pages)) {
      for (const row of page) {
        sheet.addRow(encoder.encode(row)).commit();
        count += 1;
        if (++sinceCheck >= XLSX_ROWS_PER_CHECK) {
          sinceCheck = 0;
          await nextTurn(undefined, { signal });
          while (zipInput !== null && zipInputFull(zipInput)) await once(zipInput, 'drain', { signal });
          while (body.writableNeedDrain) await once(body, 'drain', { signal });
        }
      }
    }
    sheet.commit();
    await Promise.all([workbook.commit(), delivered]);
    return count;
  } catch (error) {
    // a failed source: destroying the PassThrough makes the pipeline destroy `out` too
    body.destroy(error as Error);
    const deliveryError = await delivered.then(
      () => undefined,
      (e: unknown) => e,
    );
    throw signal.aborted ? deliveryError : error;
  }
}

/** The pages of a source whose first page has already been read. */
async function* resumed<T>(first: IteratorResult<T>, rest: AsyncIterator<T>): AsyncGenerator<T> {
  if (first.done) return;
  yield first.value;
  yield* { [Symbol.asyncIterator]: () => rest };
}
