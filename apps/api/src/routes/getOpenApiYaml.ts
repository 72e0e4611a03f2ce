import type { RequestHandler } from 'express';
import type { ApiDeps } from '../deps';
import { contractYaml } from './reference';

/** GET /openapi.yaml — the contract as written. */
export const getOpenApiYaml = (_deps: ApiDeps): RequestHandler => (_req, res) => {
  res.setHeader('Cache-Control', 'no-cache');
  res.type('application/yaml; charset=utf-8').send(contractYaml());
};
