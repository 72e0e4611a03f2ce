import type { RequestHandler } from 'express';
import type { ApiDeps } from '../deps';
import { docsScript } from './reference';

/** GET /docs/redoc.standalone.js — the renderer of the reference page, from npm's redoc. */
export const getDocsScript = (_deps: ApiDeps): RequestHandler => (_req, res) => {
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Cache-Control', 'public, max-age=86400');
  res.type('application/javascript; charset=utf-8').send(docsScript());
};
