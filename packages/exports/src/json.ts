import { pipeTo } from './stream';

/** Elements serialised before one write. */
const JSON_CHUNK_ELEMENTS = 500;

/**
 * Streams a JSON array to `out` element by element (pages of elements in, one chunk per
 * JSON_CHUNK_ELEMENTS elements, piped to `out` with backpressure by stream.pipeline). An
 * undefined element is written as null, as JSON.stringify does in arrays. Ends `out` and
 * resolves with the number of elements once it has finished. If `source` throws or `out`
 * closes early, the promise rejects and `out` is destroyed.
 */
export async function writeJson(source: AsyncIterable<unknown[]>, out: NodeJS.WritableStream): Promise<number> {
  let count = 0;
  async function* chunks(): AsyncGenerator<string> {
    let parts: string[] = ['['];
    for await (const page of source) {
      for (const element of page) {
        const json = JSON.stringify(element);
        parts.push(count === 0 ? (json ?? 'null') : `,${json ?? 'null'}`);
        count += 1;
        if (parts.length >= JSON_CHUNK_ELEMENTS) {
          yield parts.join('');
          parts = [];
        }
      }
    }
    parts.push(']');
    yield parts.join('');
  }
  await pipeTo(chunks(), out);
  return count;
}
