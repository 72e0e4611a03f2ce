import { type Core, unwrap } from '../core';
import { writeToFile } from '../platform/file-sink';
import type { ExportFormat } from '../types';

/** A Node writable (fs.WriteStream, process.stdout, an HTTP response...), without importing Node's types on the browser path. */
export interface NodeWritableLike {
  write(chunk: Uint8Array, callback?: (error?: Error | null) => void): boolean;
  once(event: 'drain' | 'error', listener: (...args: unknown[]) => void): unknown;
}

export interface ExportOptions {
  /** json (default), csv, xlsx or ndjson. */
  format?: ExportFormat;
  signal?: AbortSignal;
}

export interface OpenedExport {
  body: ReadableStream<Uint8Array>;
  contentType: string | null;
  /** From Content-Disposition, when the service names the file. */
  filename: string | null;
}

export interface DownloadResult {
  bytes: number;
  contentType: string | null;
  filename: string | null;
}

export class Exports {
  constructor(private readonly core: Core) {}

  /** The export of a job (`job_...`) or a batch (`bat_...`) as a stream of bytes. */
  async open(id: string, options: ExportOptions = {}): Promise<OpenedExport> {
    const query = { format: (options.format ?? 'json') as 'json' };
    const pending = id.startsWith('bat_')
      ? this.core.http.GET('/v1/batches/{batch_id}/export', {
          params: { path: { batch_id: id }, query },
          parseAs: 'stream',
          signal: options.signal,
        })
      : this.core.http.GET('/v1/jobs/{job_id}/export', {
          params: { path: { job_id: id }, query },
          parseAs: 'stream',
          signal: options.signal,
        });
    const { data, response } = await unwrap(pending);
    return {
      body: data as unknown as ReadableStream<Uint8Array>,
      contentType: response.headers.get('content-type'),
      filename: filenameOf(response.headers.get('content-disposition')),
    };
  }

  /**
   * Streams the export of a job or a batch to `to`: a file path (Node; written whole or not at
   * all), a WritableStream (closed at the end), or a Node writable stream (left open, as
   * process.stdout must be). Nothing is held in memory.
   */
  async download(
    id: string,
    to: string | WritableStream<Uint8Array> | NodeWritableLike,
    options: ExportOptions = {},
  ): Promise<DownloadResult> {
    return saveExport(await this.open(id, options), to, options.signal);
  }
}

/** Writes an opened export to a file path, a WritableStream (closed at the end) or a Node writable (left open). */
export async function saveExport(
  opened: OpenedExport,
  to: string | WritableStream<Uint8Array> | NodeWritableLike,
  signal?: AbortSignal,
): Promise<DownloadResult> {
  const meta = { contentType: opened.contentType, filename: opened.filename };
  if (typeof to === 'string') return { bytes: await writeToFile(opened.body, to, signal), ...meta };
  if (isWebWritable(to)) {
    let bytes = 0;
    const counter = new TransformStream<Uint8Array, Uint8Array>({
      transform(chunk, controller) {
        bytes += chunk.length;
        controller.enqueue(chunk);
      },
    });
    await opened.body.pipeThrough(counter).pipeTo(to, { signal });
    return { bytes, ...meta };
  }
  return { bytes: await writeToNodeStream(opened.body, to), ...meta };
}

function isWebWritable(value: unknown): value is WritableStream<Uint8Array> {
  return typeof (value as WritableStream).getWriter === 'function';
}

async function writeToNodeStream(body: ReadableStream<Uint8Array>, to: NodeWritableLike): Promise<number> {
  const reader = body.getReader();
  let bytes = 0;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      if (done) break;
      bytes += value.length;
      if (!to.write(value))
        await new Promise<void>((resolve, reject) => {
          to.once('drain', () => resolve());
          to.once('error', (error) => reject(error));
        });
    }
  } catch (error) {
    await reader.cancel().catch(() => undefined);
    throw error;
  }
  return bytes;
}

/** `filename` of a Content-Disposition header (RFC 6266; `filename*` preferred). */
export function filenameOf(header: string | null): string | null {
  if (!header) return null;
  const extended = /filename\*\s*=\s*(?:UTF-8|utf-8)''([^;]+)/.exec(header);
  if (extended) {
    try {
      return decodeURIComponent(extended[1].trim());
    } catch {
      // fall through to the plain form
    }
  }
  const plain = /filename\s*=\s*("((?:[^"\\]|\\.)*)"|[^;]+)/.exec(header);
  if (!plain) return null;
  return plain[2] !== undefined ? plain[2].replace(/\\(.)/g, '$1') : plain[1].trim();
}
