import type { RequestHandler } from 'express';
import type { ApiDeps } from '../deps';
import { DOCS_CSP, docsPage } from './reference';

/** GET /docs — the API reference page, which loads nothing from any other host (its CSP says so). */
export const getDocs = (_deps: ApiDeps): RequestHandler => (_req, res) => {
  res.setHeader('Content-Security-Policy', DOCS_CSP);
  res.setHeader('X-Content-Type-Options', 'nosniff');
  res.setHeader('Referrer-Policy', 'no-referrer');
  res.setHeader('Cache-Control', 'no-cache');
  res.type('text/html; charset=utf-8').send(docsPage());
};
