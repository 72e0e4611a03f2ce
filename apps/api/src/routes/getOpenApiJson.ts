import type { RequestHandler } from 'express';
import type { ApiDeps } from '../deps';
import { contractJsonAsset, sendReferenceAsset } from './reference';

/** GET /openapi.json — the contract as JSON, for client generators and the reference page; made once, revalidated by ETag. */
export const getOpenApiJson = (_deps: ApiDeps): RequestHandler => (req, res) => {
  sendReferenceAsset(req, res, contractJsonAsset(), 'application/json; charset=utf-8', 'no-cache');
};
