import type { RequestHandler } from 'express';
import type { ApiDeps } from '../deps';
import { contractJson } from './reference';

/** GET /openapi.json — the contract as JSON, for client generators and the reference page. */
export const getOpenApiJson = (_deps: ApiDeps): RequestHandler => (_req, res) => {
  res.setHeader('Cache-Control', 'no-cache');
  res.type('application/json; charset=utf-8').send(contractJson());
};
