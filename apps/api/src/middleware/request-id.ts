import { randomUUID } from 'node:crypto';
import type { RequestHandler } from 'express';

const VALID = /^[A-Za-z0-9._:-]{1,128}$/;

/** Echoes a well-formed caller X-Request-ID, otherwise generates one; set before anything can fail. */
export const requestId: RequestHandler = (req, res, next) => {
  const sent = req.get('x-request-id');
  const id = sent && VALID.test(sent) ? sent : randomUUID();
  res.locals.requestId = id;
  res.setHeader('X-Request-ID', id);
  next();
};
