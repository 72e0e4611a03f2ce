/** The browser build's file sink: there are no file paths in a browser. */
export function writeToFile(_body: ReadableStream<Uint8Array>, path: string): Promise<number> {
  return Promise.reject(new TypeError(`cannot write to the path ${path} here: pass a WritableStream (or, in Node, a path)`));
}
