import { randomBytes } from 'node:crypto';
import { createWriteStream } from 'node:fs';
import { rename, rm } from 'node:fs/promises';
import { Readable } from 'node:stream';
import type { ReadableStream as NodeReadableStream } from 'node:stream/web';
import { pipeline } from 'node:stream/promises';

/**
 * Node's file sink of downloads: the bytes go to a temporary file beside the target, renamed over
 * it once complete, so an interrupted download never leaves a truncated file under the asked name.
 * The browser build replaces this module with file-sink.browser.ts.
 */
export async function writeToFile(body: ReadableStream<Uint8Array>, path: string, signal?: AbortSignal): Promise<number> {
  const partial = `${path}.${randomBytes(4).toString('hex')}.part`;
  // Needed by the SDK's own build (tsconfig.build.json: the DOM's ReadableStream), not by the
  // workspace's types, which is all the lint rule sees.
  // eslint-disable-next-line @typescript-eslint/no-unnecessary-type-assertion
  const source = Readable.fromWeb(body as unknown as NodeReadableStream<Uint8Array>);
  const file = createWriteStream(partial, { mode: 0o644 });
  try {
    await pipeline(source, file, { signal });
    await rename(partial, path);
  } catch (error) {
    await rm(partial, { force: true });
    throw error;
  }
  return file.bytesWritten;
}
