import compression from 'compression';
import type { Request, RequestHandler, Response } from 'express';

/** Responses smaller than this go as they are: compressing them saves less than it costs. */
export const COMPRESSION_THRESHOLD_BYTES = 1024;

/**
 * What may be compressed: `compression`'s own test (compressible media types: JSON, CSV, text),
 * plus NDJSON exports, which the media-type database does not list. Event streams never are:
 * a compressor holds back what it has not filled a block with, and an event must reach its
 * client when it is written. xlsx is a zip already and is left alone.
 */
function compressible(req: Request, res: Response): boolean {
  const type = String(res.getHeader('Content-Type') ?? '')
    .split(';')[0]
    .trim()
    .toLowerCase();
  if (type === 'text/event-stream') return false;
  if (type === 'application/x-ndjson') return true;
  return compression.filter(req, res);
}

/**
 * Responses over 1 KB are compressed with gzip or br when the request's Accept-Encoding takes
 * one (extensions.md 7), streamed ones included: a response whose length is not known when its
 * headers go (a result or an export written slice by slice) is compressed as it is written, and
 * the compressor's output keeps the socket's backpressure (the `compression` middleware pauses
 * it when the socket is full, and 'drain' listeners of the response wait on the compressor).
 * Brotli runs at quality 4 (the middleware's default), close to gzip's speed.
 */
export function compressResponses(): RequestHandler {
  return compression({ threshold: COMPRESSION_THRESHOLD_BYTES, filter: compressible });
}
