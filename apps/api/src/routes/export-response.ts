import { once } from 'node:events';
import { PassThrough } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import contentDisposition from 'content-disposition';
import type { Request, Response } from 'express';
import { type ExportFormat, type ExportSubject, exportContentType, exportFileName, isExportFormat } from '@sdx/exports';

/** The validated `format` query parameter (json when absent). */
export function exportFormatOf(req: Request): ExportFormat {
  const format = req.query.format;
  return isExportFormat(format) ? format : 'json';
}

/**
 * Sends a download: `write` streams the body into a PassThrough (and ends it); once its first
 * bytes are ready, status 200, the format's Content-Type, an attachment Content-Disposition
 * naming the job or batch (the `content-disposition` package) and the body follow, piped to
 * `res` with backpressure by stream.pipeline. A failure before the first byte leaves `res`
 * untouched, so the error renderer answers plain JSON; after it, the pipeline destroys `res`
 * and the connection is cut (a truncated file is never passed off as whole).
 */
export async function sendDownload(
  res: Response,
  subject: ExportSubject,
  id: string,
  format: ExportFormat,
  write: (out: NodeJS.WritableStream) => Promise<unknown>,
): Promise<void> {
  const body = new PassThrough();
  const writing = write(body);
  writing.catch(() => undefined); // awaited below; this only keeps an early rejection from going unhandled
  const decided = new AbortController();
  try {
    await Promise.race([once(body, 'readable', { signal: decided.signal }), writing]);
  } finally {
    decided.abort(); // drops a 'readable' listener that would hold the PassThrough out of flowing mode
  }
  res.status(200);
  res.setHeader('Content-Type', exportContentType(format));
  res.setHeader('Content-Disposition', contentDisposition(exportFileName(subject, id, format)));
  res.setHeader('Cache-Control', 'no-store');
  try {
    await Promise.all([pipeline(body, res), writing]);
  } catch (error) {
    if (!res.headersSent) {
      res.removeHeader('Content-Type');
      res.removeHeader('Content-Disposition');
    }
    throw error;
  }
}

/** Streams text chunks to `out` with stream.pipeline (backpressure included) and ends it. */
export function streamText(chunks: AsyncIterable<string>): (out: NodeJS.WritableStream) => Promise<void> {
  return (out) => pipeline(chunks, out);
}
