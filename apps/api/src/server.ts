import { createServer, type Server } from 'node:http';
import type { Duplex } from 'node:stream';
import type { Express } from 'express';

/**
 * The API's HTTP server. A request Node's parser refuses before any route sees it (a NUL or
 * other control character in the request line or a header, a malformed header, headers over
 * the size limit) still gets a JSON answer: 400 invalid_request, or 431 for oversize headers,
 * and the connection is closed. Node's default would be a bare status line.
 */
export function createApiServer(app: Express): Server {
  const server = createServer(app);
  server.keepAliveTimeout = 65_000;
  server.on('clientError', (error: NodeJS.ErrnoException, socket: Duplex) => {
    if (error.code === 'ECONNRESET' || !socket.writable) {
      socket.destroy();
      return;
    }
    const oversize = error.code === 'HPE_HEADER_OVERFLOW';
    const status = oversize ? '431 Request Header Fields Too Large' : '400 Bad Request';
    const body = JSON.stringify({
      detail: {
        error: 'invalid_request',
        message: oversize ? 'Request headers are too large.' : 'The request is not valid HTTP (malformed request line or header).',
      },
    });
    socket.end(
      `HTTP/1.1 ${status}\r\nContent-Type: application/json; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`,
    );
  });
  return server;
}
