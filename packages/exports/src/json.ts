import { endStream, writeChunk } from './stream';

/** Elements serialised before one write. */
const JSON_CHUNK_ELEMENTS = 500;

/**
 * Streams a JSON array to `out` element by element (pages of elements in, one write per
 * chunk, waiting for 'drain' when the stream's buffer is full). An undefined element is
 * written as null, as JSON.stringify does in arrays. Ends `out` and resolves with the
 * number of elements once it has finished.
 */
export async function writeJson(source: AsyncIterable<unknown[]>, out: NodeJS.WritableStream): Promise<number> {
  let count = 0;
  let parts: string[] = ['['];
  for await (const page of source) {
    for (const element of page) {
      const json = JSON.stringify(element);
      parts.push(count === 0 ? (json ?? 'null') : `,${json ?? 'null'}`);
      count += 1;
      if (parts.length >= JSON_CHUNK_ELEMENTS) {
        const text = parts.join('');
        parts = [];
        await writeChunk(out, text);
      }
    }
  }
  parts.push(']');
  await writeChunk(out, parts.join(''));
  await endStream(out);
  return count;
}
