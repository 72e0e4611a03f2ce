/** Output helper shared by the writers: stream.pipeline does the writing, waiting and cleanup. */
import { pipeline } from 'node:stream/promises';

/** The error a writer rejects with when its output closes before the export has finished. */
export const OUTPUT_CLOSED = 'export output closed before the export finished';

/**
 * Streams `chunks` (an async iterable, or a Readable) into `out` with stream.pipeline: it waits
 * for 'drain' whenever `out` is full, ends `out` and resolves once `out` has finished. If
 * `chunks` throws, or `out` errors or closes first, it rejects and both are destroyed; an early
 * close is reported as OUTPUT_CLOSED.
 */
export async function pipeTo(chunks: AsyncIterable<string | Buffer> | NodeJS.ReadableStream, out: NodeJS.WritableStream): Promise<void> {
  try {
    await pipeline(chunks, out);
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ERR_STREAM_PREMATURE_CLOSE') throw new Error(OUTPUT_CLOSED, { cause: error });
    throw error;
  }
}
