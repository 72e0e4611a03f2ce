/** Output helpers shared by the writers: every write respects backpressure. */

/** Writes a chunk; when the stream's buffer is full, waits for 'drain' (or fails on error/close). */
export async function writeChunk(out: NodeJS.WritableStream, chunk: string | Buffer): Promise<void> {
  if (out.write(chunk)) return;
  await waitForDrain(out);
}

/**
 * Resolves on `target`'s 'drain'; rejects if `target` or any of `watched` (e.g. the final
 * output when `target` is an inner stage) errors or closes first.
 */
export function waitForDrain(target: NodeJS.WritableStream, watched: NodeJS.WritableStream[] = []): Promise<void> {
  const guarded = [target, ...watched.filter((s) => s !== target)];
  return new Promise<void>((resolve, reject) => {
    // a destroyed stream emits neither 'drain' nor 'close' again
    if (guarded.some(isDestroyed)) {
      reject(new Error('export output closed before the export finished'));
      return;
    }
    const cleanup = (): void => {
      target.removeListener('drain', onDrain);
      for (const stream of guarded) {
        stream.removeListener('error', onError);
        stream.removeListener('close', onClose);
      }
    };
    const onDrain = (): void => {
      cleanup();
      resolve();
    };
    const onError = (err: Error): void => {
      cleanup();
      reject(err);
    };
    const onClose = (): void => {
      cleanup();
      reject(new Error('export output closed before the export finished'));
    };
    target.on('drain', onDrain);
    for (const stream of guarded) {
      stream.on('error', onError);
      stream.on('close', onClose);
    }
  });
}

function isDestroyed(stream: NodeJS.WritableStream): boolean {
  return (stream as NodeJS.WritableStream & { destroyed?: boolean }).destroyed === true;
}

/** Ends the stream and resolves once everything written has been flushed ('finish'). */
export function endStream(out: NodeJS.WritableStream): Promise<void> {
  return guardOutput(
    out,
    new Promise<void>((resolve, reject) => {
      (out.end as (cb: (err?: Error | null) => void) => void)((err) => (err ? reject(err) : resolve()));
    }),
  );
}

/**
 * Settles with `work`, or rejects first if `out` errors or closes before it has finished
 * (a client that goes away must not leave the export waiting forever).
 */
export function guardOutput<T>(out: NodeJS.WritableStream, work: Promise<T>): Promise<T> {
  let cleanup = (): void => {};
  const failure = new Promise<never>((_resolve, reject) => {
    const state = out as NodeJS.WritableStream & { writableFinished?: boolean };
    const onError = (err: Error): void => reject(err);
    const onClose = (): void => {
      if (state.writableFinished !== true) reject(new Error('export output closed before the export finished'));
    };
    if (isDestroyed(out) && state.writableFinished !== true) {
      reject(new Error('export output closed before the export finished'));
    }
    out.on('error', onError);
    out.on('close', onClose);
    cleanup = () => {
      out.removeListener('error', onError);
      out.removeListener('close', onClose);
    };
  });
  return Promise.race([work, failure]).finally(cleanup);
}

/** True when a Writable reports a full buffer (writableNeedDrain), for streams that expose it. */
export function needsDrain(out: NodeJS.WritableStream): boolean {
  return (out as NodeJS.WritableStream & { writableNeedDrain?: boolean }).writableNeedDrain === true;
}

/** Lets pending I/O (compression, socket writes) run before producing more. */
export function yieldToEventLoop(): Promise<void> {
  return new Promise((resolve) => setImmediate(resolve));
}
