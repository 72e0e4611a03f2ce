import { createParser } from 'eventsource-parser';

/**
 * A reader of `text/event-stream` bodies, parsed by eventsource-parser as the HTML standard says
 * (fields `event`, `data` over several lines joined with \n, `id`; comments; a blank line ends an
 * event; lines end with \n, \r\n or \r; an event the stream cut before its blank line is dropped).
 * Works on any ReadableStream of bytes (fetch in browsers and in Node), unlike EventSource, which
 * cannot send an API key in a header. The console reads its streams with the same parser.
 */

export interface ServerSentEvent {
  event: string;
  data: string;
  /** The last event ID the stream set (an `id` field sets it for the events after it too). */
  id?: string;
}

export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  // TextDecoder drops a leading byte order mark.
  const decoder = new TextDecoder();
  const parsed: ServerSentEvent[] = [];
  let lastId: string | undefined;
  const parser = createParser({
    onEvent(message) {
      if (message.id !== undefined) lastId = message.id;
      parsed.push({ event: message.event || 'message', data: message.data, ...(lastId !== undefined ? { id: lastId } : {}) });
    },
  });
  try {
    for (;;) {
      const { done, value } = await reader.read();
      parser.feed(done ? decoder.decode() : decoder.decode(value, { stream: true }));
      while (parsed.length > 0) yield parsed.shift()!;
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
