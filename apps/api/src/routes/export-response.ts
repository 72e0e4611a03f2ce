import type { Request, Response } from 'express';
import {
  contentDisposition,
  type ExportFormat,
  type ExportSubject,
  exportContentType,
  exportFileName,
  endStream,
  isExportFormat,
  writeChunk,
} from '@sdx/exports';

/** The validated `format` query parameter (json when absent). */
export function exportFormatOf(req: Request): ExportFormat {
  const format = req.query.format;
  return isExportFormat(format) ? format : 'json';
}

/**
 * Sends a download: status 200, the format's Content-Type, an attachment Content-Disposition
 * naming the job or batch, then the body streamed by `write`, which must end `out`. A failure
 * before the first byte drops the download headers so the error renderer answers plain JSON;
 * after it, the renderer cuts the connection (a truncated file is never passed off as whole).
 */
export async function sendDownload(
  res: Response,
  subject: ExportSubject,
  id: string,
  format: ExportFormat,
  write: (out: NodeJS.WritableStream) => Promise<unknown>,
): Promise<void> {
  res.status(200);
  res.setHeader('Content-Type', exportContentType(format));
  res.setHeader('Content-Disposition', contentDisposition(exportFileName(subject, id, format)));
  res.setHeader('Cache-Control', 'no-store');
  try {
    await write(res);
  } catch (error) {
    if (!res.headersSent) {
      res.removeHeader('Content-Type');
      res.removeHeader('Content-Disposition');
    }
    throw error;
  }
}

/**
 * Writes text chunks to `out` one at a time, each once the one before has drained (no read-ahead:
 * the next chunk is only read then), and ends it.
 */
export function streamText(chunks: AsyncIterable<string>): (out: NodeJS.WritableStream) => Promise<void> {
  return async (out) => {
    for await (const chunk of chunks) await writeChunk(out, chunk);
    await endStream(out);
  };
}
