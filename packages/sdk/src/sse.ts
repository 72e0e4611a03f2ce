/**
 * A reader of `text/event-stream` bodies, as the HTML standard parses them: fields `event`,
 * `data` (several lines joined with \n), `id` and `retry`; lines starting with `:` are comments;
 * a blank line ends an event; lines end with \n, \r\n or \r. Works on any ReadableStream of bytes
 * (fetch in browsers and in Node), unlike EventSource, which cannot send an API key in a header.
 */

export interface ServerSentEvent {
  event: string;
  data: string;
  id?: string;
}

export async function* readEvents(body: ReadableStream<Uint8Array>): AsyncGenerator<ServerSentEvent> {
  const reader = body.getReader();
  const decoder = new TextDecoder();
  let buffer = '';
  let event = '';
  let data: string[] = [];
  let id: string | undefined;
  let first = true;
  try {
    for (;;) {
      const { done, value } = await reader.read();
      buffer += done ? decoder.decode() : decoder.decode(value, { stream: true });
      if (first && buffer.length > 0) {
        if (buffer.charCodeAt(0) === 0xfeff) buffer = buffer.slice(1);
        first = false;
      }
      let match: RegExpExecArray | null;
      // A lone \r at the end of the buffer may be the first half of \r\n: wait for more.
      while ((match = /\r\n|\n|\r(?!$)/.exec(buffer)) !== null || (done && buffer.endsWith('\r'))) {
        const end = match ? match.index : buffer.length - 1;
        const line = buffer.slice(0, end);
        buffer = buffer.slice(end + (match ? match[0].length : 1));
        if (line === '') {
          if (data.length > 0) yield { event: event || 'message', data: data.join('\n'), ...(id !== undefined ? { id } : {}) };
          event = '';
          data = [];
          continue;
        }
        if (line.startsWith(':')) continue;
        const colon = line.indexOf(':');
        const field = colon === -1 ? line : line.slice(0, colon);
        let value = colon === -1 ? '' : line.slice(colon + 1);
        if (value.startsWith(' ')) value = value.slice(1);
        if (field === 'event') event = value;
        else if (field === 'data') data.push(value);
        else if (field === 'id' && !value.includes('\0')) id = value;
      }
      if (done) return;
    }
  } finally {
    await reader.cancel().catch(() => undefined);
  }
}
